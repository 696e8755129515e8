"""A busy app's first answer (docs/accessibility.md): an app just started on a
loaded machine is on the AT-SPI bus but slow to answer, which is busy, not
hung. inspect and the accessibility probe wait for its first answer as long as
their own timeouts allow, and in a run only the step's deadline bounds it.

The test app's --busy-first-query MS keeps its main thread busy for MS inside
the first question for its name after its window maps (the first question a
client asks an app it found) and records "busy-in-query", so the test knows
the stall came where it should. BUSY_MS is longer than any bound the runtime
gave a first answer before (1 s a call; inspect's and the probe's 5 s of
retries)."""

import json
import os

import ksr

TITLE = "KSR Test App"
BUSY_MS = 7000


class BusyFirstAnswer(ksr.KsrTestCase):

    def recorded(self, path):
        with open(path, encoding="utf-8") as f:
            return f.read().splitlines()

    def busy_app(self):
        rec = os.path.join(self.tmp, "rec.txt")
        return "%s --record %s --busy-first-query %d" % (ksr.TESTAPP, rec, BUSY_MS), rec

    def run_busy(self, steps, atspi=True):
        launch, rec = self.busy_app()
        sc = self.scenario("name: busy\nlaunch: %s\nprocess: ^ksr-testapp$\nwindow: ^%s$\n"
                           "settle_s: 0.2\natspi: %s\nsteps:\n%s"
                           % (launch, TITLE, "true" if atspi else "false", steps))
        out = self.out()
        rc, _so, se, _el = self.run_rt(["run", "--xvfb", sc], out=out, timeout=120)
        self.assertNoSanitizerReport(se)
        return out, rc, se, rec

    def test_inspect_waits_for_a_busy_app(self):
        launch, rec = self.busy_app()
        rc, so, se, _el = self.run_rt(["inspect", "--xvfb", "--json", "--launch", launch,
                                       "--wait-window", TITLE, "--timeout", "60"], timeout=120)
        self.assertNoSanitizerReport(se)
        self.assertEqual(rc, 0, se[-3000:])
        self.assertIn("busy-in-query", self.recorded(rec))
        acc = json.loads(so)["accessibility"]
        apps = [a for a in acc["apps"] if a.get("status") == "ok"]
        self.assertEqual(len(apps), 1, acc)
        names = {c["name"] for c in apps[0]["controls"]}
        self.assertIn("Press me", names)
        self.assertAppGone(["ksr-testapp", "Xvfb"])

    def test_the_probe_waits_for_a_busy_app(self):
        out, rc, se, rec = self.run_busy('  - click_element: "Enable feature"\n'
                                         '    role: check box\n')
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        self.assertEqual(report["accessibility"]["status"], "ok", report["accessibility"])
        self.assertEqual(self.recorded(rec), ["busy-in-query", "checked:1"])

    def test_a_step_waits_for_a_busy_app_within_its_deadline(self):
        """No probe: the step asks first, and its timeout_s (20) is what bounds
        the first answer."""
        out, rc, se, rec = self.run_busy('  - click_element: "Enable feature"\n'
                                         '    role: check box\n'
                                         '    timeout_s: 20\n', atspi=False)
        self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        self.assertEqual(self.recorded(rec), ["busy-in-query", "checked:1"])

    def test_the_step_deadline_still_bounds_it(self):
        out, rc, se, rec = self.run_busy('  - click_element: "Enable feature"\n'
                                         '    role: check box\n'
                                         '    timeout_s: 2\n', atspi=False)
        report = self.assertEvidence(out, "app-failed", "step-failed", rc=rc, stderr=se)
        self.assertRegex(report["reason"], r"did not answer.*within \d+ ms")
        self.assertIn("busy-in-query", self.recorded(rec))
        self.assertNotIn("checked:1", self.recorded(rec))


if __name__ == "__main__":
    import unittest
    unittest.main()
