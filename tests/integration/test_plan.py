"""Plans (issue #8): a plan step whose post: does not hold hands over to the
goal loop, which recovers; without goal: it fails the run; and the grounding
cache: a second run clicks the cached place with no grounder call, and a
window that moved misses the cache and is grounded again. Real Xvfb +
openbox, the GTK3 test app, the scripted model server (model_server.py)."""

import json
import os
import subprocess
import unittest

import ksr
from test_goal import DONE_OK, GoalCase, PRESS, events, rec_lines

YES = {"answer": {"answer": "yes", "reason": "it shows"}}
BUTTON = {"ground_window": "KSR Test App", "at": [0.5, 0.13]}


class PlanTest(GoalCase):

    def plan_text(self):
        # Escape does not press the button: the post: fails and the loop takes over.
        return ("plan:\n"
                "  - key: Escape\n"
                "    post:\n"
                "      - shell: grep -q pressed %s\n"
                "        timeout_s: 1\n" % self.rec)

    def test_failed_post_hands_over_to_the_goal_loop_which_recovers(self):
        display = self.start_xvfb()
        self.serve({"plan": [PRESS, DONE_OK]}, display)
        out, report = self.run_case(self.goal_scenario(self.plan_text()),
                                    self.model_env(display), "pass", "completed")
        self.assertEqual(rec_lines(self.rec), ["pressed"])
        h = events(out, "plan.handover")
        self.assertEqual(len(h), 1)
        self.assertEqual((h[0]["plan_step"], h[0]["check"], h[0]["to"]),
                         (1, "shell", "goal-loop"))
        self.assertEqual(report["goal"]["handover"]["plan_step"], 1)
        self.assertTrue(report["goal"]["handed_over"])
        self.assertEqual([t["result"]["status"] for t in report["goal"]["turns"]],
                         ["ok", "done"])

    def test_failed_post_without_goal_fails_the_run(self):
        display = self.start_xvfb()
        path = self.scenario(self.header() + self.plan_text())
        _out, report = self.run_case(path, self.bare_env(display), "app-failed",
                                     "check-failed")
        self.assertIn("post:", report["reason"])
        self.assertEqual(rec_lines(self.rec), [])

    # ---- the grounding cache ------------------------------------------------------

    def grounded(self, cache):
        return self.scenario(self.header() +
                             "steps:\n"
                             "  - click_grounded: the Press me button\n"
                             "    expect: the button was pressed\n"), cache

    def test_grounding_cache_hit_then_miss_after_the_window_moved(self):
        display = self.start_xvfb()
        self.serve({"ground": [BUTTON], "judge": [YES]}, display)
        cache = os.path.join(self.tmp, "gcache.json")
        env = self.model_env(display, KASM_RUNTIME_GROUNDING_CACHE=cache)
        path, _ = self.grounded(cache)
        out1, _r = self.run_case(path, env, "pass", "completed", out_name="o1")
        self.assertEqual(len(self.requests("ground")), 1)
        self.assertFalse(events(out1, "grounding_cache")[0]["hit"])
        with open(cache, encoding="utf-8") as f:
            entry = json.load(f)["entries"][0]
        self.assertEqual(entry["description"], "the Press me button")
        # Same window, same screen: clicked from the cache, no grounder call;
        # the expect: is still asked (assertions are never cached).
        judged = len(self.requests("judge"))
        out2, _r = self.run_case(path, env, "pass", "completed", out_name="o2")
        self.assertEqual(len(self.requests("ground")), 1, "no grounder call on a hit")
        self.assertTrue(events(out2, "grounding_cache")[0]["hit"])
        self.assertGreater(len(self.requests("judge")), judged)
        self.assertEqual(rec_lines(self.rec), ["pressed", "pressed"])
        # The window moved (a real move, before the step): a miss, grounded again,
        # and the entry rewritten with the new geometry.
        moved = self.scenario(self.header() +
                              "steps:\n"
                              "  - shell: xdotool search --name '^KSR Test App$' "
                              "windowmove 400 300\n"
                              "  - sleep: 1\n"
                              "  - click_grounded: the Press me button\n"
                              "    expect: the button was pressed\n", name="moved.yaml")
        out3, _r = self.run_case(moved, env, "pass", "completed", out_name="o3")
        self.assertEqual(len(self.requests("ground")), 2)
        miss = events(out3, "grounding_cache")[0]
        self.assertFalse(miss["hit"])
        self.assertIn("window", miss["reason"])
        with open(cache, encoding="utf-8") as f:
            entry2 = json.load(f)["entries"][0]
        self.assertNotEqual(entry2["window"], entry["window"])
        self.assertEqual(rec_lines(self.rec), ["pressed"] * 3)


if __name__ == "__main__":
    unittest.main()
