"""The run deadline (KASM_RUNTIME_DEADLINE_S / --deadline): when it passes
before a stage's own limit, the run ends test-error / deadline, with DONE, well
before the stage's limit would have."""

import os
import textwrap
import unittest

import ksr

NEVER_APPEARS = """\
    name: deadline-app-wait
    launch: ${KSR_TESTAPP} --no-window
    process: ^ksr-testapp$
    window: ^KSR Test App$
    launch_timeout_s: 60
    settle_s: 1
    atspi: false
    """


class RunDeadlineTest(ksr.KsrTestCase):

    def env(self, **extra):
        extra.setdefault("KSR_TESTAPP", ksr.TESTAPP)
        return super().env(**extra)

    def run_deadline(self, text, args=(), env=None, xvfb=True):
        path = self.scenario(textwrap.dedent(text))
        out = self.out()
        argv = ["run"] + (["--xvfb"] if xvfb else []) + list(args) + [path]
        rc, so, se, el = self.run_rt(argv, out=out, env=env, timeout=90)
        self.assertNoSanitizerReport(se)
        report = self.assertEvidence(out, "test-error", "deadline", rc=rc, stderr=se)
        return report, out, el

    def test_env_deadline_during_app_wait(self):
        report, out, el = self.run_deadline(NEVER_APPEARS,
                                            env=self.env(KASM_RUNTIME_DEADLINE_S="8"))
        # the run deadline (8 s) came long before launch_timeout_s (60 s)
        self.assertLess(el, 30, "deadline 8 s must end the run long before 60 s")
        self.assertGreater(el, 2, "the app wait ran until the deadline's reserve, not 0 s")
        self.assertIn(ksr.stage(report, "app-wait")["status"], ("timeout", "failed", "interrupted"))
        self.assertAppGone(None)

    def test_flag_overrides_env(self):
        report, out, el = self.run_deadline(NEVER_APPEARS, args=["--deadline", "8"],
                                            env=self.env(KASM_RUNTIME_DEADLINE_S="600"))
        self.assertLess(el, 30)

    def test_deadline_during_settle(self):
        report, out, el = self.run_deadline("""\
            name: deadline-settle
            launch: ${KSR_TESTAPP}
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 30
            settle_s: 60
            atspi: false
            """, env=self.env(KASM_RUNTIME_DEADLINE_S="12"))
        self.assertLess(el, 35)
        self.assertEqual(ksr.stage(report, "app-wait")["status"], "ok")

    def test_deadline_during_step(self):
        report, out, el = self.run_deadline("""\
            name: deadline-step
            launch: ${KSR_TESTAPP}
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 30
            settle_s: 1
            atspi: false
            steps:
              - shell: sleep 100
                timeout_s: 90
            """, env=self.env(KASM_RUNTIME_DEADLINE_S="12"))
        self.assertLess(el, 35)
        self.assertAppGone(None)  # also the shell step's sleep

    def test_deadline_during_boot_wait(self):
        # an unreachable display and a long boot_timeout_s: the deadline decides
        report, out, el = self.run_deadline("""\
            name: deadline-boot
            launch: ${KSR_TESTAPP}
            process: ^ksr-testapp$
            window: ^KSR Test App$
            boot_timeout_s: 60
            atspi: false
            """, xvfb=False, env=self.env(DISPLAY=ksr.unused_display(),
                                          KASM_RUNTIME_DEADLINE_S="8"))
        self.assertLess(el, 30)
        self.assertEqual(ksr.tagged_pids(self.tag), [])


if __name__ == "__main__":
    unittest.main()
