"""SIGTERM / SIGINT at each waiting stage: the wait is cancelled, the report is
written (test-error / interrupted), DONE is there, the process exits promptly,
and what the run launched is stopped."""

import os
import signal
import textwrap
import time
import unittest

import ksr

APP = "ksr-testapp"
# A liveness bound, not a timing assertion: the run must exit well within this
# many seconds of the signal (the stage it interrupts would take 60 s).
EXIT_BOUND_S = 15


class RunSignalsTest(ksr.KsrTestCase):

    def env(self, **extra):
        extra.setdefault("KSR_TESTAPP", ksr.TESTAPP)
        return super().env(**extra)

    def interrupt(self, text, stage_name, sig=signal.SIGTERM, xvfb=True, env=None):
        path = self.scenario(textwrap.dedent(text))
        out = self.out()
        args = ["run"] + (["--xvfb"] if xvfb else []) + [path]
        rt = self.start_rt(args, out=out, env=env)
        ksr.wait_for_trace_event(out, ksr.in_stage(stage_name), timeout=60, proc=rt)
        time.sleep(0.5)  # be inside the wait, not at its first line
        self.assertIsNone(rt.poll(), "the run is still waiting in %s" % stage_name)
        t_sig = time.monotonic()
        rt.signal(sig)
        rc = rt.wait(timeout=EXIT_BOUND_S + 30)
        took = time.monotonic() - t_sig
        se = rt.stderr
        self.assertNoSanitizerReport(se)
        self.assertLess(took, EXIT_BOUND_S, "exit promptly after the signal (took %.1fs)" % took)
        self.assertEqual(rt.stdout, "")
        report = self.assertEvidence(out, "test-error", "interrupted", rc=rc, pid=rt.pid,
                                     stderr=se)
        st = ksr.stage(report, stage_name)
        self.assertIsNotNone(st, "the interrupted stage %s is recorded" % stage_name)
        self.assertEqual(st["status"], "interrupted")
        self.assertFalse(os.path.exists(os.path.join(out, "99-failure.png")),
                         "diagnosis is skipped on interruption")
        return report, out, rt

    def test_sigterm_during_boot_wait(self):
        display = ksr.unused_display()
        report, out, rt = self.interrupt("""\
            name: boot-wait-term
            launch: ${KSR_TESTAPP}
            process: ^ksr-testapp$
            window: ^KSR Test App$
            boot_timeout_s: 60
            atspi: false
            """, "boot-wait", xvfb=False, env=self.env(DISPLAY=display))
        self.assertEqual(ksr.tagged_pids(self.tag), [], "nothing was launched before the display")

    def test_sigterm_during_app_wait(self):
        report, out, rt = self.interrupt("""\
            name: app-wait-term
            launch: ${KSR_TESTAPP} --no-window
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 60
            atspi: false
            """, "app-wait")
        self.assertEqual(ksr.stage(report, "launch")["status"], "ok")
        self.assertAppGone(None)  # the app, and the run's own Xvfb and session

    def test_sigterm_during_settle(self):
        report, out, rt = self.interrupt("""\
            name: settle-term
            launch: ${KSR_TESTAPP}
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 30
            settle_s: 60
            atspi: false
            """, "settle")
        self.assertEqual(ksr.stage(report, "app-wait")["status"], "ok")
        self.assertAppGone(None)

    def test_sigterm_during_sleep_step(self):
        report, out, rt = self.interrupt("""\
            name: step-term
            launch: ${KSR_TESTAPP}
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 30
            settle_s: 1
            atspi: false
            steps:
              - sleep: 120
            """, "steps")
        self.assertAppGone(None)

    def test_sigint_once_during_app_wait(self):
        report, out, rt = self.interrupt("""\
            name: app-wait-int
            launch: ${KSR_TESTAPP} --slow-start 60000
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 60
            atspi: false
            """, "app-wait", sig=signal.SIGINT)
        self.assertAppGone(None)


if __name__ == "__main__":
    unittest.main()
