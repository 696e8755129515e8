"""The app is watched in every wait after settle (docs/architecture.md, "The app is watched"):
its death ends the current step at once, whatever the step waits for, with
outcome `crashed` naming the signal and the step's line; a window closed while
the process lives on is `window-lost`; in desktop mode a spawned tool's death
ends the step the same way.

How "at once" is measured without reading the runtime's own idea of when the
app died: the test app starts its --crash-after timer when its window is
mapped (tests/app/ksr-testapp.c, start_timers from on_map), so the death is at
map + C. The map is before the runtime's `app` event (the runtime sees a window
after it is mapped), so `app.t_ms + C` is no earlier than the death, and
`step.end.t_ms - (app.t_ms + C)` bounds the detection delay from below. Its
bound from above is the delay between the map and the `app` event, which the
app wait keeps to one X event (a few ms; at most its 250 ms /proc rescan tick).
So the assertion is: step.end comes within 1 s + that 250 ms tick after
`app.t_ms + C`, where the step itself was configured to last 10 s (the old
behaviour: the step waits out its 10 s). The step's start is asserted to be
before the death, so the step really was cut short."""

import os
import textwrap
import unittest

import ksr

CRASH_AFTER_MS = 5000  # settle 1 s + the stages before the step: ~4 s into the step
STEP_S = 10
APP_SEEN_TICK_MS = 250  # the app wait's slowest look at a new window
LIVENESS_MS = 1000
WINDOW_GRACE_MS = 500  # docs/architecture.md: a window gone is looked at again after this


def events(out, name):
    return [e for e in ksr.read_trace(out) if e.get("event") == name]


class AliveTest(ksr.KsrTestCase):

    def env(self, **extra):
        extra.setdefault("KSR_TESTAPP", ksr.TESTAPP)
        return super().env(**extra)

    def run_scenario(self, text):
        path = self.scenario(textwrap.dedent(text))
        out = self.out()
        rc, so, se, el = self.run_rt(["run", "--xvfb", path], out=out, timeout=180)
        self.assertNoSanitizerReport(se)
        return path, out, rc, se

    def app_scenario(self, args, step):
        return """\
            name: alive
            launch: '${KSR_TESTAPP} %s'
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 30
            settle_s: 1
            atspi: false
            steps:
              - %s
            """ % (args, step)

    def assert_cut_at_death(self, path, out, rc, se, needle):
        report = self.assertEvidence(out, "app-failed", "crashed", rc=rc, stderr=se)
        line = ksr.line_of(path, needle)
        self.assertIn("SIGSEGV", report["reason"])
        self.assertIn("signal 11", report["reason"])
        self.assertTrue(ksr.names_line(report["reason"], line), report["reason"])
        self.assertIn("into step 1", report["reason"])
        self.assertEqual([f["outcome"] for f in report["failures"]], ["crashed"],
                         "one failure: no window-lost or step failure after it")
        app = events(out, "app")[0]
        start = events(out, "step.start")[0]
        end = events(out, "step.end")[0]
        self.assertEqual(end["status"], "error")
        self.assertIn("SIGSEGV", end.get("reason", ""))
        death_no_earlier_than = app["t_ms"] + CRASH_AFTER_MS
        self.assertLess(start["t_ms"], death_no_earlier_than - APP_SEEN_TICK_MS,
                        "the step started before the app died")
        delay = end["t_ms"] - death_no_earlier_than
        self.assertLess(delay, LIVENESS_MS + APP_SEEN_TICK_MS,
                        "the step ended within 1 s of the death, not after its %d s" % STEP_S)
        self.assertLess(end["t_ms"] - start["t_ms"], STEP_S * 1000 - 2000)
        exits = events(out, "app.exit")
        self.assertEqual(len(exits), 1, exits)
        self.assertEqual(exits[0]["line"], line)
        self.assertEqual(ksr.stage(report, "steps")["status"], "failed")
        self.assertEqual(ksr.stage(report, "final-checks")["status"], "skipped")
        self.assertAppGone(["ksr-testapp"])
        return report

    def test_crash_during_a_sleep_step(self):
        path, out, rc, se = self.run_scenario(self.app_scenario(
            "--crash-after %d" % CRASH_AFTER_MS, "sleep: %d" % STEP_S))
        self.assert_cut_at_death(path, out, rc, se, "sleep:")

    def test_crash_during_a_wait_window_step(self):
        path, out, rc, se = self.run_scenario(self.app_scenario(
            "--crash-after %d" % CRASH_AFTER_MS,
            "wait_window: ^Never Shown$\n                timeout_s: %d" % STEP_S))
        self.assert_cut_at_death(path, out, rc, se, "wait_window:")

    def test_crash_during_a_file_check(self):
        never = os.path.join(self.tmp, "never-written")
        path, out, rc, se = self.run_scenario(self.app_scenario(
            "--crash-after %d" % CRASH_AFTER_MS,
            "shell: 'true'\n"
            "                timeout_s: %d\n"
            "                checks:\n"
            "                  - file: %s" % (STEP_S, never)))
        self.assert_cut_at_death(path, out, rc, se, "shell:")

    def test_window_closed_process_lives(self):
        path, out, rc, se = self.run_scenario(self.app_scenario(
            "--close-window-after %d" % CRASH_AFTER_MS, "sleep: %d" % STEP_S))
        report = self.assertEvidence(out, "app-failed", "window-lost", rc=rc, stderr=se)
        self.assertEqual(events(out, "app.exit"), [], "the process lived on")
        self.assertNotIn("SIG", report["reason"])
        self.assertIn("lives on without a window", report["reason"])
        self.assertIn("into step 1", report["reason"])
        self.assertTrue(ksr.names_line(report["reason"], ksr.line_of(path, "sleep:")),
                        report["reason"])
        self.assertEqual([f["outcome"] for f in report["failures"]], ["window-lost"])
        # Its DestroyNotify is in every wait: the 10 s sleep ends at the
        # close (map + C), not at its end. The process-exit grace (500 ms,
        # a dying app's connection closes before its pidfd is readable)
        # comes on top of the 1 s liveness bound.
        app = events(out, "app")[0]
        start = events(out, "step.start")[0]
        end = events(out, "step.end")[0]
        closed_no_earlier_than = app["t_ms"] + CRASH_AFTER_MS
        self.assertLess(start["t_ms"], closed_no_earlier_than - APP_SEEN_TICK_MS)
        self.assertEqual(end["status"], "error")
        self.assertIn("lives on", end.get("reason", ""))
        self.assertLess(end["t_ms"] - closed_no_earlier_than,
                        LIVENESS_MS + WINDOW_GRACE_MS + APP_SEEN_TICK_MS)
        self.assertEqual(ksr.stage(report, "final-checks")["status"], "skipped")

    def test_desktop_tool_crash_mid_step(self):
        path = self.scenario(
            "name: desktop-alive\n"
            "desktop: true\n"
            "settle_s: 0.2\n"
            "atspi: false\n"
            "steps:\n"
            "  - spawn: {command: '${KSR_TESTAPP} --title \"KSR Crashy\" --crash-after 1500',"
            " window: ^KSR Crashy$, as: crashy}\n"
            "  - sleep: %d\n" % STEP_S)
        out = self.out()
        rc, _so, se, el = self.run_rt(["run", "--xvfb", path], out=out, timeout=180)
        self.assertNoSanitizerReport(se)
        report = self.assertEvidence(out, "app-failed", "crashed", rc=rc, stderr=se)
        self.assertIn("crashy", report["reason"])
        self.assertIn("SIGSEGV", report["reason"])
        self.assertTrue(ksr.names_line(report["reason"], ksr.line_of(path, "sleep:")),
                        report["reason"])
        ends = {e["index"]: e for e in events(out, "step.end")}
        self.assertEqual(ends[1]["status"], "ok")
        self.assertEqual(ends[2]["status"], "error")
        self.assertLess(ends[2]["duration_ms"], STEP_S * 1000 - 2000,
                        "the sleep was cut short by the tool's death")


if __name__ == "__main__":
    unittest.main()
