"""Runs that fail, each for its own reason, with the verdict, outcome, exit code
and evidence the contract asks for."""

import os
import textwrap
import unittest

import ksr

APP = "ksr-testapp"


class RunFailTest(ksr.KsrTestCase):

    def env(self, **extra):
        extra.setdefault("KSR_TESTAPP", ksr.TESTAPP)
        return super().env(**extra)

    def run_scenario(self, text, timeout=120, env=None):
        path = self.scenario(textwrap.dedent(text))
        out = self.out()
        rc, so, se, el = self.run_rt(["run", "--xvfb", path], out=out, timeout=timeout, env=env)
        self.assertNoSanitizerReport(se)
        self.assertEqual(so, "", "stdout stays clean without --json")
        return path, out, rc, se, el

    def test_never_appeared(self):
        path, out, rc, se, el = self.run_scenario("""\
            name: never-appears
            launch: ${KSR_TESTAPP} --no-window
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 3
            settle_s: 1
            atspi: false
            """)
        report = self.assertEvidence(out, "app-failed", "never-appeared", rc=rc, stderr=se)
        self.assertLess(el, 60, "launch_timeout_s 3 bounds the app wait")
        self.assertIn(ksr.stage(report, "app-wait")["status"], ("failed", "timeout"))
        self.assertTrue(os.path.exists(os.path.join(out, "99-failure.png")),
                        "diagnosis saves 99-failure.png while the display is there")
        self.assertTrue(os.path.exists(os.path.join(out, "launch.log")))
        self.assertFalse(os.path.exists(os.path.join(out, "00-first-look.png")),
                         "the run never reached first look")
        self.assertAppGone([APP])

    def test_crash_before_the_window(self):
        # The launch command dies by a signal before any window appears: that is
        # a crash, found at once, not a never-appeared after the whole timeout.
        path, out, rc, se, el = self.run_scenario("""\
            name: crashes-early
            launch: sh -c 'sleep 0.3; kill -SEGV $$'
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 60
            settle_s: 1
            atspi: false
            """)
        report = self.assertEvidence(out, "app-failed", "crashed", rc=rc, stderr=se)
        self.assertLess(el, 45, "found before the 60 s launch timeout")
        self.assertIn("signal 11", report["reason"])
        self.assertIn("before its window appeared", report["reason"])

    def test_crash_during_settle(self):
        path, out, rc, se, el = self.run_scenario("""\
            name: crashes
            launch: ${KSR_TESTAPP} --crash-after 500
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 30
            settle_s: 3
            atspi: false
            """)
        report = self.assertEvidence(out, "app-failed", "crashed", rc=rc, stderr=se)
        self.assertEqual(ksr.stage(report, "app-wait")["status"], "ok")
        self.assertEqual(ksr.stage(report, "settle")["status"], "failed")
        self.assertTrue(os.path.exists(os.path.join(out, "99-failure.png")))

    def test_failing_shell_step(self):
        path, out, rc, se, el = self.run_scenario("""\
            name: shell-fails
            launch: ${KSR_TESTAPP}
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 30
            settle_s: 1
            atspi: false
            steps:
              - sleep: 0.1
              - shell: exit 3
              - shell: touch ${KSR_IT_NEVER}
            """, env=self.env(KSR_IT_NEVER=os.path.join(self.tmp, "never")))
        line = ksr.line_of(path, "exit 3")
        report = self.assertEvidence(out, "app-failed", "step-failed", rc=rc, stderr=se)
        self.assertTrue(ksr.names_line(report["reason"], line),
                        "reason names line %d: %r" % (line, report["reason"]))
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "never")),
                         "a failing step ends the run")
        self.assertEqual(ksr.stage(report, "steps")["status"], "failed")
        rows = {r["index"]: r for r in report["steps"]}
        self.assertEqual(rows[2]["line"], line)
        self.assertEqual(rows[1]["status"], "ok")
        self.assertEqual(rows[2]["status"], "failed")
        self.assertTrue(3 not in rows or rows[3]["status"] == "skipped",
                        "the step after a failing one does not run")
        self.assertTrue(os.path.exists(os.path.join(out, "99-failure.png")))
        self.assertAppGone([APP])

    def test_shell_step_missing_command(self):
        path, out, rc, se, el = self.run_scenario("""\
            name: shell-missing
            launch: ${KSR_TESTAPP}
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 30
            settle_s: 1
            atspi: false
            steps:
              - shell: ksr-it-no-such-command-anywhere --flag
            """)
        # A missing command (127) is the setup's fault: test-error, with the
        # step that could not run as the outcome.
        report = self.assertEvidence(out, "test-error", "step-failed", rc=rc, stderr=se)
        self.assertIn("exit 127: command not found", report["reason"])
        self.assertTrue(ksr.names_line(report["reason"], ksr.line_of(path, "ksr-it-no-such")),
                        report["reason"])

    def test_failing_check(self):
        path, out, rc, se, el = self.run_scenario("""\
            name: check-fails
            launch: ${KSR_TESTAPP}
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 30
            settle_s: 1
            atspi: false
            steps:
              - shell: "true"
                checks:
                  - file: ${KSR_IT_MISSING}
                    timeout_s: 1
            """, env=self.env(KSR_IT_MISSING=os.path.join(self.tmp, "missing.txt")))
        report = self.assertEvidence(out, "app-failed", "check-failed", rc=rc, stderr=se)
        line = ksr.line_of(path, "- file:")
        step_line = ksr.line_of(path, "- shell:")
        self.assertTrue(ksr.names_line(report["reason"], line)
                        or ksr.names_line(report["reason"], step_line), report["reason"])
        self.assertAppGone([APP])

    def test_failing_window_check(self):
        path, out, rc, se, el = self.run_scenario("""\
            name: window-check-fails
            launch: ${KSR_TESTAPP}
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 30
            settle_s: 1
            atspi: false
            steps:
              - sleep: 0.1
                checks:
                  - window: ^No Such Window$
                    timeout_s: 1
            """)
        self.assertEvidence(out, "app-failed", "check-failed", rc=rc, stderr=se)

    def test_backend_unavailable_names_line(self):
        text = textwrap.dedent("""\
            # A step whose backend is not available (a grounded click with no
            # model configured): it loads, and at run time the run ends
            # test-error / backend-unavailable naming its line.
            name: backend-missing
            launch: ${KSR_TESTAPP}
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 30
            settle_s: 1
            atspi: false
            steps:
              - sleep: 0.1
              - click_grounded: the Press me button
                expect: the label says Pressed 1
            """)
        path = self.scenario(text)
        self.assertEqual(ksr.line_of(path, "click_grounded"), 13)
        rc, so, se, el = self.run_rt(["validate", path])
        self.assertEqual(rc, 0, "a step with a missing backend still loads: " + se)
        out = self.out()
        rc, so, se, el = self.run_rt(["run", "--xvfb", path], out=out, timeout=120)
        self.assertNoSanitizerReport(se)
        report = self.assertEvidence(out, "test-error", "backend-unavailable", rc=rc, stderr=se)
        self.assertTrue(ksr.names_line(report["reason"], 13), report["reason"])
        self.assertIn("click_grounded", report["reason"] + str(report["steps"]))
        self.assertAppGone([APP])


if __name__ == "__main__":
    unittest.main()
