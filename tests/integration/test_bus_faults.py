"""Bus faults told to the right party (issue 31, docs/reliability.md#fault-matrix):
an accessibility registry that stops answering while the app answers is the
session's fault, test-error / backend-unavailable naming the registry; an app
that stops answering stays the app's (app-failed). Both faults are real: the
session's own at-spi2-registryd, or the test app, SIGSTOPped mid-run."""

import os
import signal
import textwrap
import time

import unittest

import ksr

REGISTRYD = "at-spi2-registryd"


def cont(pid):
    try:
        os.kill(pid, signal.SIGCONT)
    except ProcessLookupError:
        pass


class BusFaultsTest(ksr.KsrTestCase):

    def env(self, **extra):
        extra.setdefault("KSR_TESTAPP", ksr.TESTAPP)
        return super().env(**extra)

    def start_steps(self, steps):
        """A --xvfb run of the test app whose steps begin with a sleep (the
        moment the fault is applied), then `steps`."""
        path = self.scenario(textwrap.dedent("""\
            name: bus-fault
            launch: ${KSR_TESTAPP}
            process: ^ksr-testapp$
            window: ^KSR Test App$
            settle_s: 0.5
            steps:
              - sleep: 4
            """) + steps)
        out = self.out()
        rt = self.start_rt(["run", "--xvfb", path], out=out)
        ksr.wait_for_trace_event(out, ksr.in_stage("steps"), timeout=90, proc=rt)
        return rt, out

    def tagged(self, name):
        pids = [p for p, n in ksr.tagged_pids(self.tag) if n == name]
        self.assertEqual(len(pids), 1, "one %s of this run: %r" % (name, ksr.tagged_pids(self.tag)))
        return pids[0]

    def stop(self, pid):
        self.addCleanup(cont, pid)
        os.kill(pid, signal.SIGSTOP)

    def test_frozen_registry_is_the_sessions_fault(self):
        rt, out = self.start_steps("  - click_element: Press me\n    timeout_s: 10\n")
        self.stop(self.tagged(REGISTRYD))
        rc = rt.wait(120)
        report = self.assertEvidence(out, "test-error", "backend-unavailable", rc=rc,
                                     pid=rt.pid, stderr=rt.stderr)
        self.assertRegex(report["reason"], r"registry")
        self.assertRegex(report["reason"], r"org\.a11y\.atspi\.Registry")
        self.assertNotRegex(report["reason"], r"is the app hung")
        self.assertNoSanitizerReport(rt.stderr)

    def test_stopped_app_stays_the_apps_fault(self):
        rt, out = self.start_steps("  - click_element: Press me\n    timeout_s: 10\n")
        self.stop(self.tagged("ksr-testapp"))
        rc = rt.wait(120)
        report = self.assertEvidence(out, "app-failed", "step-failed", rc=rc, pid=rt.pid,
                                     stderr=rt.stderr)
        self.assertNotRegex(report["reason"], r"registry")
        self.assertNoSanitizerReport(rt.stderr)


if __name__ == "__main__":
    unittest.main()
