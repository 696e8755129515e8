"""Desktop mode (issue #4, docs/acting.md#desktop-mode): spawn a tool and wait
for its window, observe it with checks, act on it, kill it and confirm it is
gone; tools the scenario does not kill are stopped at the end; a tool that dies
is app-failed.
Real Xvfb + openbox (--xvfb) and real tools: xterm, zenity, the GTK3 test app."""

import os
import unittest

import ksr


def step_rows(out):
    return {e["index"]: e for e in ksr.read_trace(out) if e.get("event") == "step.end"}


class DesktopTest(ksr.KsrTestCase):

    def env(self, **extra):
        extra.setdefault("KSR_TESTAPP", ksr.TESTAPP)
        return super().env(**extra)

    def desktop(self, steps):
        return self.scenario("name: desktop\n"
                             "desktop: true\n"
                             "settle_s: 0.2\n"
                             "atspi: false\n"
                             "steps:\n" + steps)

    def run_desktop(self, path, verdict, outcome):
        out = self.out()
        rc, _so, se, _el = self.run_rt(["run", "--xvfb", path], out=out, timeout=180)
        self.assertNoSanitizerReport(se)
        report = self.assertEvidence(out, verdict, outcome, rc=rc, stderr=se)
        return out, report

    def test_three_tools_spawned_checked_killed(self):
        done = os.path.join(self.tmp, "typed-in-xterm")
        path = self.desktop(
            # -e sh: a shell that reads no rc file (an interactive bash runs the
            # machine's ~/.bashrc, which can stall on a stale pyenv lock)
            "  - spawn: {command: 'xterm -T \"KSR Xterm\" -e sh', window: ^KSR Xterm$,"
            " process: ^xterm$, as: term}\n"
            "    checks:\n"
            "      - window: ^KSR Xterm$\n"
            "      - process: ^xterm$\n"
            "  - type: \"echo ok > %s\\n\"\n"
            "    checks:\n"
            "      - file: %s\n"
            "  - kill: term\n"
            "    checks:\n"
            "      - no_window: ^KSR Xterm$\n"
            "  - spawn: {command: 'zenity --info --title \"KSR Info\" --text hello',"
            " window: ^KSR Info$, as: info}\n"
            "    checks:\n"
            "      - window: ^KSR Info$\n"
            "  - kill: info\n"
            "  - spawn: {command: '${KSR_TESTAPP} --title \"KSR Tool\"', window: ^KSR Tool$,"
            " process: ^ksr-testapp$, as: app}\n"
            "    checks:\n"
            "      - window: ^KSR Tool$\n"
            "  - kill: app\n"
            "    checks:\n"
            "      - no_window: ^KSR Tool$\n" % (done, done))
        out, report = self.run_desktop(path, "pass", "completed")
        rows = step_rows(out)
        self.assertEqual([rows[i]["kind"] for i in sorted(rows)],
                         ["spawn", "type", "kill", "spawn", "kill", "spawn", "kill"])
        for i, log in ((1, "spawn-01.log"), (4, "spawn-02.log"), (6, "spawn-03.log")):
            r = rows[i]
            self.assertEqual(r["tool"]["log"], log)
            self.assertTrue(os.path.isfile(os.path.join(out, log)))
            self.assertIn("window_id", r["tool"])
            self.assertGreater(r["window"]["w"], 0)
            self.assertEqual(r["screenshot"], "%02d-step.png" % i)
        # the type step acted on the spawned xterm: the file proves the keys arrived
        self.assertEqual(rows[2]["window_title"], "KSR Xterm")
        with open(done, encoding="utf-8") as f:
            self.assertEqual(f.read(), "ok\n")
        for i in (3, 5, 7):
            self.assertEqual(rows[i]["status"], "ok")
            self.assertNotIn("ended_before_kill", rows[i], "killed while running")
        self.assertEqual(ksr.stage(report, "final-checks")["status"], "skipped")
        self.assertAppGone(["xterm", "zenity", "ksr-testapp"])

    def test_tools_not_killed_are_stopped_at_the_end(self):
        path = self.desktop(
            "  - spawn: {command: 'xterm -T \"KSR Left\"', window: ^KSR Left$}\n"
            "  - spawn: {command: 'zenity --info --title \"KSR Left 2\" --text x',"
            " window: ^KSR Left 2$}\n")
        self.run_desktop(path, "pass", "completed")
        self.assertAppGone(["xterm", "zenity"])

    def test_spawn_waits_for_its_own_window(self):
        """A window with the same title already on the desktop is not the new
        tool's: kill confirms the new one is gone and the old one stays."""
        path = self.desktop(
            "  - spawn: {command: '${KSR_TESTAPP} --title \"KSR Same\"', window: ^KSR Same$,"
            " as: first}\n"
            "  - spawn: {command: '${KSR_TESTAPP} --title \"KSR Same\"', window: ^KSR Same$,"
            " as: second}\n"
            "  - kill: second\n"
            "    checks:\n"
            "      - window: ^KSR Same$\n"
            "  - kill: first\n"
            "    checks:\n"
            "      - no_window: ^KSR Same$\n")
        out, _report = self.run_desktop(path, "pass", "completed")
        rows = step_rows(out)
        self.assertNotEqual(rows[1]["tool"]["window_id"], rows[2]["tool"]["window_id"])
        self.assertNotEqual(rows[1]["tool"]["pid"], rows[2]["tool"]["pid"])

    def test_tool_crash_fails_check(self):
        """The test app crashes 2 s after its window shows, inside the
        sleep step whose check needs its window: the death ends the step at
        once, `crashed` (not the check's failure), naming the tool and the
        step's line. (2 s: past the spawn step's settle, up to 1 s after its
        window, on a loaded machine too.)"""
        path = self.desktop(
            "  - spawn: {command: '${KSR_TESTAPP} --title \"KSR Crashy\" --crash-after 2000',"
            " window: ^KSR Crashy$, as: crashy}\n"
            "  - sleep: 3\n"
            "    checks:\n"
            "      - window: ^KSR Crashy$\n"
            "        timeout_s: 1\n"
            "  - kill: crashy\n")
        _out, report = self.run_desktop(path, "app-failed", "crashed")
        self.assertTrue(ksr.names_line(report["reason"], ksr.line_of(path, "sleep: 3")),
                        report["reason"])
        self.assertIn("'crashy'", report["reason"])
        self.assertIn("signal 11", report["reason"])

    def test_tool_crash_before_kill(self):
        """A tool that dies of a signal before its kill is a crash, not a pass:
        its pidfd is in every wait, so the step it dies in (the sleep) ends at
        once and names it (test_alive.py times that); the kill never runs."""
        path = self.desktop(
            "  - spawn: {command: '${KSR_TESTAPP} --title \"KSR Crashy\" --crash-after 300',"
            " window: ^KSR Crashy$, as: crashy}\n"
            "  - sleep: 2\n"
            "  - kill: crashy\n")
        out, report = self.run_desktop(path, "app-failed", "crashed")
        self.assertTrue(ksr.names_line(report["reason"], ksr.line_of(path, "sleep: 2")))
        self.assertIn("signal 11", report["reason"])
        self.assertEqual(step_rows(out)[2]["status"], "error")
        self.assertNotIn(3, step_rows(out), "the kill step never ran")

    def test_tool_window_destroyed_while_it_lives_on(self):
        """A tool whose window is destroyed while its process lives on (the
        test app's --close-window-after): its window's DestroyNotify is in every
        wait, as the app's is, so the sleep step ends at once, window-lost,
        naming the tool; not at the next look after the sleep."""
        path = self.desktop(
            "  - spawn: {command: '${KSR_TESTAPP} --title \"KSR Lonely\" --close-window-after"
            " 1000', window: ^KSR Lonely$, process: ^ksr-testapp$, as: lonely}\n"
            "  - sleep: 10\n"
            "  - kill: lonely\n")
        out, report = self.run_desktop(path, "app-failed", "window-lost")
        self.assertTrue(ksr.names_line(report["reason"], ksr.line_of(path, "sleep: 10")),
                        report["reason"])
        self.assertIn("the tool 'lonely'", report["reason"])
        self.assertIn("lives on without a window", report["reason"])
        rows = step_rows(out)
        self.assertNotIn(3, rows, "the kill step never ran")
        # Liveness, from the scenario's own numbers: the 10 s sleep was cut,
        # not waited out (the window goes 1 s after it is shown).
        self.assertLess(rows[2]["duration_ms"], 10000 - 3000, rows[2])

    def test_tool_dies_before_its_window(self):
        path = self.desktop(
            "  - spawn: {command: '${KSR_TESTAPP} --no-such-option', window: ^KSR Test App$,"
            " as: broken}\n")
        out, report = self.run_desktop(path, "app-failed", "step-failed")
        self.assertTrue(ksr.names_line(report["reason"], ksr.line_of(path, "spawn:")))
        self.assertIn("exited with status 2", report["reason"])
        tails = [t for t in report.get("log_tails", []) if t.get("path") == "spawn-01.log"]
        self.assertTrue(tails and "no-such-option" in tails[0]["text"],
                        "the tool's own error message is in the report: %r" % tails)

    def test_spawn_window_never_appears(self):
        path = self.desktop(
            "  - spawn: {command: 'sleep 30', window: ^Never$, as: s}\n"
            "    timeout_s: 1\n")
        _out, report = self.run_desktop(path, "app-failed", "step-failed")
        self.assertIn("no window matching ^Never$ appeared within 1 s", report["reason"])
        self.assertAppGone(["sleep"])


if __name__ == "__main__":
    unittest.main()
