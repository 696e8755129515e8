"""The app wait sees what is on screen (docs/scenario.md#the-app-wait), with real
apps: a zenity question standing for a first-run legal notice that blocks the app
(blocked-by-prompt, well before launch_timeout_s, naming the dialog and its
buttons; the same prompt declared under blockers: keeps the blockers' outcome);
an xterm titled "RetroArch  " against window: retroarch (never-appeared whose
reason names the window and marks the near miss); a wrong process: pattern (the
reason names that half); the test app's splash (_NET_WM_WINDOW_TYPE_SPLASH,
replaced by the main window) never taken as the app's window, nor a class-less,
untyped one the app replaces within settle_s."""

import os
import textwrap
import unittest

import ksr
import watchlib

LEGAL = ("zenity --question --title 'Legal notice' --text 'Accept the terms?' "
         "--ok-label 'I Agree' --cancel-label Cancel")


class AppWaitTest(ksr.KsrTestCase):

    def env(self, **extra):
        extra.setdefault("KSR_TESTAPP", ksr.TESTAPP)
        return super().env(**extra)

    def run_scenario(self, text, timeout=120, watch=False):
        path = self.scenario(textwrap.dedent(text))
        out = self.out()
        if watch:
            self.watch = watchlib.Watch(self, [out, "--junit", os.path.join(self.tmp, "j.xml")])
        rc, so, se, el = self.run_rt(["run", "--xvfb", path], out=out, timeout=timeout)
        self.assertNoSanitizerReport(se)
        return out, rc, se, el

    def assert_watched_as_blocker(self, verdict, outcome, exit_code, report):
        """The watch's terminal line and DONE count it as a blocker; JUnit too."""
        self.assertEqual(self.watch.wait(30), exit_code)
        terminal = [l for l in self.watch.lines() if l.get("event", "").startswith("terminal_")]
        self.assertEqual(len(terminal), 1)
        self.assertEqual(terminal[0]["event"], "terminal_" + verdict.replace("-", "_"))
        self.assertEqual(terminal[0]["blocker"], outcome)
        self.assertEqual(terminal[0]["reason"], report["reason"])
        done = self.watch.lines()[-1]
        self.assertEqual((done["type"], done["blocked"], done["pass"]), ("DONE", 1, 0))
        root = watchlib.validate_junit(self, os.path.join(self.tmp, "j.xml"))
        problem = root.find(".//testcase[@name='run']/" +
                            ("failure" if verdict == "app-failed" else "error"))
        self.assertIsNotNone(problem, "a blocker is never a pass in JUnit")
        self.assertEqual(problem.get("type"), outcome)
        props = {p.get("name"): p.get("value") for p in root.iter("property")}
        self.assertEqual(props.get("blocker"), outcome)

    def test_prompt_that_blocks_the_app(self):
        out, rc, se, el = self.run_scenario("""\
            name: legal-notice
            launch: %s
            process: ^zenity$
            window: Main Window
            launch_timeout_s: 90
            settle_s: 1
            """ % LEGAL, watch=True)
        report = self.assertEvidence(out, "app-failed", "blocked-by-prompt", rc=rc, stderr=se)
        self.assert_watched_as_blocker("app-failed", "blocked-by-prompt", 1, report)
        reason = report["reason"]
        self.assertRegex(reason, r"^line 4: zenity \(pid \d+\) ")
        self.assertIn('shows only its dialog "Legal notice"', reason)
        self.assertIn("no window matching 'Main Window' appeared", reason)
        # zenity is a GTK app launched by the run: it is on the accessibility bus
        # (GTK puts Cancel first, as on screen)
        self.assertRegex(reason, r'"Legal notice" \("(Cancel", "I Agree|I Agree", "Cancel)"\);')
        self.assertLess(el, 60, "ended long before launch_timeout_s (90 s)")
        self.assertEqual(ksr.stage(report, "app-wait")["status"], "failed")
        self.assertTrue(os.path.exists(os.path.join(out, "99-failure.png")),
                        "the prompt on screen is in the failure screenshot")
        self.assertAppGone(["zenity"])

    def test_declared_blocker_keeps_blocked(self):
        out, rc, se, el = self.run_scenario("""\
            name: legal-notice-declared
            launch: %s
            process: ^zenity$
            window: Main Window
            launch_timeout_s: 90
            settle_s: 1
            blockers:
              - window: ^Legal notice$
            """ % LEGAL, watch=True)
        report = self.assertEvidence(out, "test-error", "blocked", rc=rc, stderr=se)
        self.assert_watched_as_blocker("test-error", "blocked", 2, report)
        self.assertIn("blocked by window ^Legal notice$", report["reason"])
        self.assertIn("seen at app-wait", report["reason"])
        self.assertLess(el, 60, "ended long before launch_timeout_s (90 s)")
        self.assertAppGone(["zenity"])

    def test_near_miss_title_is_named(self):
        out, rc, se, el = self.run_scenario("""\
            name: retroarch-near-miss
            launch: xterm -T 'RetroArch  ' -e sleep 600
            process: ^xterm$
            window: retroarch
            launch_timeout_s: 4
            settle_s: 1
            atspi: false
            """)
        report = self.assertEvidence(out, "app-failed", "never-appeared", rc=rc, stderr=se)
        reason = report["reason"]
        self.assertIn("process matching '^xterm$' runs", reason)
        self.assertIn("but no window matching 'retroarch' appeared", reason)
        self.assertIn('its windows: "RetroArch  " (normal; near miss: case)', reason)

    def test_process_missing_is_said(self):
        out, rc, se, el = self.run_scenario("""\
            name: wrong-process
            launch: xterm -T 'Some Terminal' -e sleep 600
            process: ^xterminal$
            window: ^Some Terminal$
            launch_timeout_s: 3
            settle_s: 1
            atspi: false
            """)
        report = self.assertEvidence(out, "app-failed", "never-appeared", rc=rc, stderr=se)
        self.assertIn("no process matching '^xterminal$' runs (a window matching "
                      "'^Some Terminal$' is there)", report["reason"])

    def test_splash_is_not_the_app_window(self):
        out, rc, se, el = self.run_scenario("""\
            name: splash
            launch: ${KSR_TESTAPP} --splash 1500
            process: ^ksr-testapp$
            window: ^KSR Test App
            launch_timeout_s: 30
            settle_s: 1
            atspi: false
            """)
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        self.assertEqual(report["app"]["window"]["title"], "KSR Test App")
        self.assertGreater(report["app"]["window"]["w"], 253, "not the 253x100 splash")
        apps = [e for e in ksr.read_trace(out) if e.get("event") == "app"]
        self.assertEqual(len(apps), 1)
        self.assertEqual(apps[0]["splash"]["title"], "KSR Test App is starting up...")
        self.assertEqual(apps[0]["window"]["type"], "normal")

    def test_class_less_window_replaced_within_settle(self):
        # A splash without WM_CLASS and without a type (LibreOffice's) that
        # matches window: is given settle_s to stay; the app replaces it.
        out, rc, se, el = self.run_scenario("""\
            name: splash-anon
            launch: ${KSR_TESTAPP} --splash 1500 --splash-anon
            process: ^ksr-testapp$
            window: ^KSR Test App
            launch_timeout_s: 30
            settle_s: 4
            atspi: false
            """)
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        self.assertEqual(report["app"]["window"]["title"], "KSR Test App")
        self.assertEqual(report["app"]["window"]["class"], "Ksr-testapp")


if __name__ == "__main__":
    unittest.main()
