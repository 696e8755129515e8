"""Diagnosis-dependent outcomes (DESIGN §3, §8): a crash loop told apart from a
single crash, and an error dialog found at first look. Kept apart from
test_run_fail because they depend on the first-look dialog detection and the
crash-loop re-check."""

import os
import textwrap
import unittest

import ksr

APP = "ksr-testapp"


class RunDiagnosisTest(ksr.KsrTestCase):

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

    def test_crash_loop(self):
        crashloop = os.path.join(ksr.SOURCE_DIR, "tests", "app", "crashloop.sh")
        self.assertTrue(os.path.exists(crashloop), crashloop)
        path, out, rc, se, el = self.run_scenario("""\
            name: crash-loop
            launch: sh ${KSR_IT_CRASHLOOP} ${KSR_TESTAPP} --crash-after 300
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 30
            settle_s: 3
            atspi: false
            """, env=self.env(KSR_IT_CRASHLOOP=crashloop))
        self.assertEvidence(out, "app-failed", "crash-loop", rc=rc, stderr=se)
        self.assertAppGone([APP, "sh"])

    def test_error_dialog(self):
        path, out, rc, se, el = self.run_scenario("""\
            name: error-dialog
            launch: '${KSR_TESTAPP} --error-dialog "Error: could not open profile"'
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 30
            settle_s: 1
            atspi: false
            """)
        report = self.assertEvidence(out, "app-failed", "error-dialog", rc=rc, stderr=se)
        self.assertIn("could not open profile", report["reason"], "the reason quotes the dialog")
        self.assertTrue(os.path.exists(os.path.join(out, "00-first-look.png")))

    def test_updater_window_is_a_concern(self):
        # a second window titled like an updater: pass-with-concerns, not a failure
        path, out, rc, se, el = self.run_scenario("""\
            name: updater
            launch: '${KSR_TESTAPP} --error-dialog "Update available"'
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 30
            settle_s: 1
            atspi: false
            updaters: ["(?i)update available"]
            """)
        report = self.assertEvidence(out, "pass-with-concerns", "completed", rc=rc, stderr=se)
        self.assertIn("updater", [c["code"] for c in report["concerns"]])


if __name__ == "__main__":
    unittest.main()
