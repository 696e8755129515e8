"""The guarded goal loop (issue #8) on the GTK3 test app, with the scripted
local model server (model_server.py) as judge and planner: a goal reached
(pass, plan.yaml), unknown names and coordinates rejected while the loop goes
on, a spent budget, the planner's claim against the success: checks both ways,
and no model at all. Whether the button was really pressed is read from the
app's --record file, never from the runtime."""

import json
import os
import unittest

import ksr
from model_server import ModelServer, read_log

FIRST_LOOK_OK = {"answer": {"rendered": True, "error_showing": False, "reason": "up"}}
DESCRIBE = {"answer": {"description": "The KSR Test App window with a Press me button, a "
                                      "check box Enable feature and a Text field."}}
PRESS = {"answer": {"tool": "click_target", "name": "press"}}
DONE_OK = {"answer": {"tool": "done", "outcome": "success", "claim": "the button was pressed"}}
DONE_FAIL = {"answer": {"tool": "done", "outcome": "failure", "claim": "I could not do it"}}
WAIT = {"answer": {"tool": "wait", "seconds": 0.2}}


def rec_lines(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().splitlines()
    except FileNotFoundError:
        return []


def events(out, name):
    return [e for e in ksr.read_trace(out) if e.get("event") == name]


class GoalCase(ksr.KsrTestCase):
    """Shared by test_goal and test_plan."""

    def setUp(self):
        super().setUp()
        self.rec = os.path.join(self.tmp, "record.txt")
        self.script_path = os.path.join(self.tmp, "script.json")
        self.log_path = os.path.join(self.tmp, "requests.jsonl")
        self.server = None

    def tearDown(self):
        if self.server:
            self.server.stop()
        super().tearDown()

    def serve(self, responses, display):
        base = {"first-look": [FIRST_LOOK_OK], "describe": [DESCRIBE]}
        base.update(responses)
        with open(self.script_path, "w", encoding="utf-8") as f:
            json.dump({"expect_size": None, "api_key": None, "responses": base}, f)
        self.server = ModelServer(self.script_path, self.log_path, display).start()

    def model_env(self, display, api="openai", **extra):
        path = {"openai": "/v1", "anthropic": "", "ollama": ""}[api]
        return self.env(DISPLAY=display, NO_AT_BRIDGE="1", KSR_TESTAPP=ksr.TESTAPP,
                        KASM_RUNTIME_MODEL="test-model", KASM_RUNTIME_MODEL_API=api,
                        KASM_RUNTIME_MODEL_URL=self.server.base + path, **extra)

    def bare_env(self, display):
        return self.env(DISPLAY=display, NO_AT_BRIDGE="1", KSR_TESTAPP=ksr.TESTAPP)

    def header(self):
        return ("name: goal\n"
                "launch: ${KSR_TESTAPP} --record %s\n"
                "process: ^ksr-testapp$\n"
                "window: ^KSR Test App$\n"
                "settle_s: 0.5\n"
                "atspi: false\n"
                "targets:\n"
                "  press: [0.5, 0.13]\n" % self.rec)

    def goal_scenario(self, extra="", success=True, name="scenario.yaml"):
        text = self.header() + "goal: Press the Press me button once\n"
        if success:
            text += "success:\n  - shell: grep -q pressed %s\n    timeout_s: 2\n" % self.rec
        return self.scenario(text + extra, name=name)

    def run_case(self, path, env, verdict, outcome, out_name="out"):
        out = self.out(out_name)
        rc, _so, se, _el = self.run_rt(["run", path], env=env, out=out, timeout=150)
        self.assertNoSanitizerReport(se)
        report = self.assertEvidence(out, verdict, outcome, rc=rc, stderr=se)
        return out, report

    def requests(self, kind=None):
        return [r for r in read_log(self.log_path) if kind is None or r.get("kind") == kind]

    def assertCleanRequests(self):
        for r in self.requests():
            self.assertEqual(r["problems"], [], "the server found problems in %r" % r)


class GoalTest(GoalCase):

    def test_goal_reached_passes_and_writes_a_plan_that_replays_without_a_model(self):
        display = self.start_xvfb()
        self.serve({"plan": [PRESS, DONE_OK]}, display)
        out, report = self.run_case(self.goal_scenario(), self.model_env(display),
                                    "pass", "completed")
        self.assertEqual(rec_lines(self.rec), ["pressed"])
        turns = events(out, "goal.turn")
        self.assertEqual([t["result"]["status"] for t in turns], ["ok", "done"])
        self.assertIn("Press me button", turns[0]["saw"])
        self.assertEqual(turns[0]["chose"], {"tool": "click_target", "name": "press"})
        self.assertEqual(turns[0]["result"]["details"]["rung"], "declared")
        self.assertEqual(report["goal"]["claim"], "success")
        self.assertEqual(len(report["goal"]["turns"]), 2)
        plans = self.requests("plan")
        self.assertEqual(len(plans), 2)
        self.assertIn("Press the Press me button once", plans[0]["prompt"])
        self.assertIn('"press"', plans[0]["prompt"])  # the offered declared target
        self.assertIn("Press me button", plans[0]["prompt"])  # the judge's description
        self.assertIsNone(plans[0]["png"], "the planner never sees the screenshot")
        self.assertCleanRequests()
        with open(os.path.join(out, "plan.yaml"), encoding="utf-8") as f:
            plan = f.read()
        self.assertIn('click: "press"', plan)
        self.assertIn("shell:", plan)
        # Replay: the compiled plan pasted under the same header, no model at all.
        os.unlink(self.rec)
        replay = self.scenario(self.header() + plan, name="replay.yaml")
        rc, _so, se, _ = self.run_rt(["validate", replay])
        self.assertEqual(rc, 0, se)
        out2, report2 = self.run_case(replay, self.bare_env(display), "pass", "completed",
                                      out_name="out2")
        self.assertEqual(rec_lines(self.rec), ["pressed"])
        self.assertEqual(len(self.requests("plan")), 2, "the replay asked no model")
        self.assertTrue(all(p["status"] == "held" for p in events(out2, "plan.post")))

    def test_text_success_check_decides_and_replays(self):
        """success: may read a control's text (issue #17): the label under the
        button says "Pressed 1" once the goal is reached; the plan keeps the check."""
        self.serve({"plan": [PRESS, DONE_OK]}, None)
        text = (self.header().replace("atspi: false\n", "") +
                "goal: Press the Press me button once\n"
                "success:\n  - text: {name: /^Pressed/, role: label, equals: Pressed 1}\n")
        path = self.scenario(text)
        out = self.out()
        env = self.env(KSR_TESTAPP=ksr.TESTAPP, KASM_RUNTIME_MODEL="test-model",
                       KASM_RUNTIME_MODEL_API="openai",
                       KASM_RUNTIME_MODEL_URL=self.server.base + "/v1")
        rc, _so, se, _el = self.run_rt(["run", "--xvfb", path], env=env, out=out, timeout=150)
        self.assertNoSanitizerReport(se)
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        checks = report["goal"]["success_checks"]
        self.assertEqual(checks[0]["status"], "held", checks)
        self.assertIn('is "Pressed 1"', checks[0]["detail"])
        with open(os.path.join(out, "plan.yaml"), encoding="utf-8") as f:
            plan = f.read()
        self.assertIn('text: {name: "/^Pressed/", role: "label", equals: "Pressed 1"}', plan)
        replay = self.scenario(self.header() + plan, name="replay.yaml")
        rc, _so, se, _ = self.run_rt(["validate", replay])
        self.assertEqual(rc, 0, se)

    def test_unknown_name_and_coordinates_are_rejected_and_the_loop_goes_on(self):
        display = self.start_xvfb()
        self.serve({"plan": [{"answer": {"tool": "click_target", "name": "submit"}},
                             {"answer": {"tool": "click_target", "name": "(240, 40)"}},
                             {"answer": {"tool": "click_target", "x": 240, "y": 40}},
                             {"answer": {"tool": "click_grounded", "text": "the button at 240,40",
                                         "expect": "pressed"}},
                             {"answer": {"tool": "shell", "text": "touch /tmp/x"}},
                             PRESS, DONE_OK]}, display)
        out, report = self.run_case(self.goal_scenario(), self.model_env(display),
                                    "pass", "completed")
        self.assertEqual(rec_lines(self.rec), ["pressed"], "nothing rejected was clicked")
        turns = events(out, "goal.turn")
        self.assertEqual([t["result"]["status"] for t in turns],
                         ["rejected"] * 5 + ["ok", "done"])
        self.assertIn("not one of the offered", turns[0]["result"]["reason"])
        self.assertIn("coordinate", turns[1]["result"]["reason"])
        self.assertIn('"x"', turns[2]["result"]["reason"])
        self.assertIn("shell", turns[4]["result"]["reason"])
        prompts = [r["prompt"] for r in self.requests("plan")]
        self.assertIn("not one of the offered", prompts[1], "told why in the next turn")
        self.assertIn("coordinate", prompts[2])

    def test_budget_spent_ends_as_failure(self):
        display = self.start_xvfb()
        self.serve({"plan": [WAIT]}, display)
        out, report = self.run_case(
            self.goal_scenario("goal_budget: {turns: 2}\n"), self.model_env(display),
            "app-failed", "check-failed")
        end = events(out, "goal.end")[0]
        self.assertEqual((end["ended_by"], end["claim"], end["turns"]), ("turns", "failure", 2))
        self.assertEqual(len(self.requests("plan")), 2)
        self.assertIn("budget", report["reason"])

    def test_claimed_success_with_a_failing_check_is_app_failed(self):
        display = self.start_xvfb()
        self.serve({"plan": [DONE_OK]}, display)
        _out, report = self.run_case(self.goal_scenario(), self.model_env(display),
                                     "app-failed", "check-failed")
        self.assertIn("claimed success", report["reason"])
        self.assertEqual(rec_lines(self.rec), [])

    def test_claimed_failure_with_passing_checks_is_a_concern(self):
        display = self.start_xvfb()
        self.serve({"plan": [PRESS, DONE_FAIL]}, display)
        _out, report = self.run_case(self.goal_scenario(), self.model_env(display, api="anthropic"),
                                     "pass-with-concerns", "completed")
        self.assertEqual([c["code"] for c in report["concerns"]], ["unconfirmed-claim"])
        self.assertEqual(self.requests("plan")[0]["protocol"], "anthropic")
        self.assertCleanRequests()

    def test_no_model_is_test_error(self):
        display = self.start_xvfb()
        _out, report = self.run_case(self.goal_scenario(), self.bare_env(display),
                                     "test-error", "backend-unavailable")
        self.assertIn("planner", report["reason"])

    def test_no_success_checks_never_passes(self):
        display = self.start_xvfb()
        self.serve({"plan": [PRESS, DONE_OK]}, display)
        _out, report = self.run_case(self.goal_scenario(success=False),
                                     self.model_env(display, api="ollama"),
                                     "test-error", "invalid-scenario")
        self.assertIn("success:", report["reason"])


if __name__ == "__main__":
    unittest.main()
