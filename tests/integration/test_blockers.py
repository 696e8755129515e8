"""Blockers (docs/watch.md#blockers) with a real zenity window titled "Sign in" beside the
test app: live remediation on and the window closed after a few seconds ->
blocked, WAITING heartbeats, resumed, pass; not closed -> test-error/blocked
after remediation_timeout_s; live remediation off -> test-error/blocked at
once, at first look and between steps. BLOCKED's content and its removal, the
trace events, the watch lines and the JUnit file are checked."""

import json
import os
import signal
import textwrap
import time
import unittest

import ksr
import watchlib

SESSION_URL = "https://kasm.example.test/#/session/1234"


def scenario_text(name, launch_extra, remediation_s, steps="  - sleep: 0.2\n"):
    return textwrap.dedent("""\
        name: %s
        launch: "${KSR_TESTAPP}%s"
        process: ^ksr-testapp$
        window: ^KSR Test App$
        launch_timeout_s: 30
        settle_s: 1
        atspi: false
        blockers:
          - window: ^Sign in$
        remediation_timeout_s: %d
        steps:
        """ % (name, launch_extra, remediation_s)) + steps


SIGN_IN = " & exec zenity --info --title 'Sign in' --text 'Please sign in'"


class BlockersTest(ksr.KsrTestCase):

    def env(self, **extra):
        extra.setdefault("KSR_TESTAPP", ksr.TESTAPP)
        return super().env(**extra)

    def zenity_pids(self):
        return [p for p, n in ksr.tagged_pids(self.tag) if n == "zenity"]

    def wait_file(self, path, timeout, rt):
        deadline = time.monotonic() + timeout
        while not os.path.exists(path):
            if rt.poll() is not None or time.monotonic() > deadline:
                self.fail("%s never appeared (rc %s); stderr:\n%s"
                          % (path, rt.poll(), rt.stderr[-3000:]))
            time.sleep(0.05)

    def test_cleared_blocker_resumes_and_passes(self):
        out = self.out()
        sc = self.scenario(scenario_text("blocker-cleared", SIGN_IN, 60))
        w = watchlib.Watch(self, ["--waiting-heartbeat", "1", out])
        rt = self.start_rt(["run", "--xvfb", sc], out=out,
                           env=self.env(KASM_RUNTIME_LIVE_REMEDIATION="1",
                                        KASM_RUNTIME_SESSION_URL=SESSION_URL))
        blocked_path = os.path.join(out, "BLOCKED")
        self.wait_file(blocked_path, 60, rt)
        with open(blocked_path, encoding="utf-8") as f:
            blocked = json.load(f)
        self.assertEqual(blocked["what"], "window ^Sign in$")
        self.assertEqual(blocked["where"], "first-look")
        self.assertEqual(blocked["session_url"], SESSION_URL)
        self.assertEqual(blocked["line"], 9)
        self.assertIn("Sign in", blocked["detail"])
        self.assertRegex(blocked["since"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
        self.assertGreater(blocked["until"], blocked["since"])
        # the person takes a while: the watcher nudges meanwhile
        w.wait_line(lambda l: l["type"] == "WAITING", 20)
        self.assertIsNone(rt.poll(), "the run waits for the person")
        pids = self.zenity_pids()
        self.assertTrue(pids, "zenity runs")
        for pid in pids:
            os.kill(pid, signal.SIGTERM)  # the person closes the dialog
        rc = rt.wait(60)
        self.assertNoSanitizerReport(rt.stderr)
        self.assertEvidence(out, "pass", "completed", rc=rc, stderr=rt.stderr)
        self.assertFalse(os.path.exists(blocked_path), "BLOCKED removed once cleared")
        names = [e["event"] for e in ksr.read_trace(out)]
        self.assertLess(names.index("blocked"), names.index("resumed"))
        self.assertEqual(w.wait(30), 0)
        lines = w.lines()
        kinds = [l.get("event", l["type"]) for l in lines]
        b, r = kinds.index("blocked"), kinds.index("resumed")
        self.assertIn("WAITING", kinds[b:r], "heartbeat between blocked and resumed")
        self.assertNotIn("WAITING", kinds[r:], "no heartbeat after resumed")
        self.assertEqual(lines[b]["session_url"], SESSION_URL)
        self.assertEqual([l["blocked"] for l in lines if l["type"] == "WAITING"][0], 1)
        self.assertEqual(kinds[-2:], ["terminal_pass", "DONE"])

    def test_blocker_not_cleared_ends_blocked(self):
        out = self.out()
        junit = os.path.join(self.tmp, "j.xml")
        sc = self.scenario(scenario_text("blocker-timeout", SIGN_IN, 3))
        w = watchlib.Watch(self, ["--waiting-heartbeat", "0", out])
        rc, _, se, _ = self.run_rt(["run", "--xvfb", "--junit", junit, sc], out=out,
                                   env=self.env(KASM_RUNTIME_LIVE_REMEDIATION="1"))
        self.assertNoSanitizerReport(se)
        report = self.assertEvidence(out, "test-error", "blocked", rc=rc, stderr=se)
        self.assertIn("not cleared within 3 s", report["reason"])
        self.assertIn("window ^Sign in$", report["reason"])
        self.assertEqual(report["line"], 9)
        self.assertFalse(os.path.exists(os.path.join(out, "BLOCKED")))
        names = [e["event"] for e in ksr.read_trace(out)]
        self.assertIn("blocked", names)
        self.assertNotIn("resumed", names)
        self.assertEqual(w.wait(30), 2)
        kinds = [l.get("event", l["type"]) for l in w.lines()]
        self.assertNotIn("WAITING", kinds, "--waiting-heartbeat 0 disables the heartbeat")
        self.assertEqual(kinds[-2:], ["terminal_test_error", "DONE"])
        self.assertEqual(w.lines()[-2]["outcome"], "blocked", "a blocker is never a pass")
        root = watchlib.validate_junit(self, junit)
        err = root.find("testsuite/testcase/error")
        self.assertEqual((err.get("type"), err.get("message")), ("blocked", report["reason"]))

    def test_remediation_off_blocks_at_first_look_at_once(self):
        out = self.out()
        sc = self.scenario(scenario_text("blocker-off", SIGN_IN, 300))
        rc, _, se, _ = self.run_rt(["run", "--xvfb", sc], out=out,
                                   env=self.env(KASM_RUNTIME_LIVE_REMEDIATION="0"))
        self.assertNoSanitizerReport(se)
        report = self.assertEvidence(out, "test-error", "blocked", rc=rc, stderr=se)
        self.assertIn("window ^Sign in$", report["reason"])
        self.assertIn("first-look", report["reason"])
        self.assertIn("live remediation is off", report["reason"])
        self.assertEqual(ksr.stage(report, "first-look")["status"], "failed")
        self.assertEqual(report["steps"], [], "no step ran")
        names = [e["event"] for e in ksr.read_trace(out)]
        self.assertNotIn("blocked", names, "no pause without live remediation")

    def test_remediation_off_blocks_between_steps(self):
        out = self.out()
        steps = textwrap.indent(textwrap.dedent("""\
            - shell: "zenity --info --title 'Sign in' --text later >/dev/null 2>&1 &"
            - sleep: 3
            - sleep: 0.1
            """), "  ")
        sc = self.scenario(scenario_text("blocker-later", "", 300, steps))
        rc, _, se, _ = self.run_rt(["run", "--xvfb", sc], out=out)  # variable unset = off
        self.assertNoSanitizerReport(se)
        report = self.assertEvidence(out, "test-error", "blocked", rc=rc, stderr=se)
        self.assertIn("step 3 (line 14)", report["reason"])
        self.assertEqual([s["index"] for s in report["steps"]], [1, 2],
                         "the blocker stopped the run before step 3")


if __name__ == "__main__":
    unittest.main()
