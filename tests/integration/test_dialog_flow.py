"""The Save As flow of the readiness issue, as a person would write it and with
no sleep step: type a line into mousepad, ctrl+s, select the Name field and
type a path into the modal Save As dialog, Return. Run 20 times in a row on
the runtime's own --xvfb session; every run must pass, and the file each run
saved holds the typed line (read here, not from the report). Input goes to the
dialog (the step rows name it: dialog_of is the main window), never to the
window it blocks."""

import os
import textwrap
import unittest

import ksr

RUNS = 20


class DialogFlowTest(ksr.KsrTestCase):
    needs_testapp = False

    def test_save_as_flow_twenty_times(self):
        saved = os.path.join(self.tmp, "saved.txt")
        path = self.scenario(textwrap.dedent("""\
            name: save-as-flow
            launch: exec mousepad
            process: ^mousepad$
            window: Mousepad$
            launch_timeout_s: 60
            settle_s: 1
            steps:
              - type: "hello from the dialog flow\\n"
              - key: ctrl+s
                checks:
                  - window: ^Save As$
                    timeout_s: 15
              - key: ctrl+a
              - type: %s
                checks:
                  - state: {name: Save, role: push button, state: sensitive}
                    timeout_s: 10
              - key: Return
                checks:
                  - no_window: ^Save As$
                    timeout_s: 10
                  - file: %s
                    timeout_s: 10
            """ % (saved, saved)))
        for i in range(RUNS):
            with self.subTest(run=i + 1):
                if os.path.exists(saved):
                    os.unlink(saved)
                out = self.out("out-%02d" % i)
                rc, _so, se, _el = self.run_rt(["run", "--xvfb", path], out=out, timeout=180)
                self.assertNoSanitizerReport(se)
                self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
                with open(saved, encoding="utf-8") as f:
                    self.assertEqual(f.read().rstrip("\n"), "hello from the dialog flow")
                rows = [e for e in ksr.read_trace(out) if e.get("event") == "step.end"]
                main = rows[0]["window_id"]
                for r in rows[2:]:
                    self.assertEqual((r["window_title"], r.get("dialog_of")), ("Save As", main), r)


if __name__ == "__main__":
    unittest.main()
