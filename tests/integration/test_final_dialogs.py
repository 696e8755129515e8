"""Error dialogs at every look (docs/scenario.md#dialogs): the final checks
classify the windows as the first look does, so an error dialog that opened
during the steps and is still up at the end fails the run (error-dialog); one
closed before the end passes. A title whose bytes are not valid UTF-8 (a
hostile client of the tests' own, tests/app/ksr-rawtitle.py, writing raw bytes
into WM_NAME/_NET_WM_NAME) is classified after lossless repair (`\\xNN`), and
the evidence still parses. Real Xvfb, real GTK app, real X client."""

import json
import os
import textwrap
import unittest

import ksr

RAWTITLE = os.path.join(ksr.SOURCE_DIR, "tests", "app", "ksr-rawtitle.py")
TITLE = "Error: could not save"


class FinalDialogsTest(ksr.KsrTestCase):

    def env(self, **extra):
        extra.setdefault("KSR_TESTAPP", ksr.TESTAPP)
        extra.setdefault("KSR_RAWTITLE", RAWTITLE)
        return super().env(**extra)

    def run_scenario(self, text):
        path = self.scenario(textwrap.dedent(text))
        out = self.out()
        rc, so, se, _el = self.run_rt(["run", "--xvfb", path], out=out, timeout=150)
        self.assertNoSanitizerReport(se)
        return out, rc, se

    def events(self, out, name):
        return [e for e in ksr.read_trace(out) if e.get("event") == name]

    def final_dialogs_check(self, report):
        checks = {c["name"]: c for c in report["final_checks"]}
        self.assertIn("dialogs", checks, report["final_checks"])
        return checks["dialogs"]

    def app(self, steps):
        return """\
            name: final-dialogs
            launch: '${KSR_TESTAPP} --error-dialog "%s" --error-dialog-on-press'
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 30
            settle_s: 0.5
            steps:
              - click_element: "Press me"
              - wait_window: "^%s$"
              %s""" % (TITLE, TITLE, textwrap.indent(textwrap.dedent(steps), " " * 14).lstrip())

    def test_error_dialog_opened_by_a_step_and_still_up_fails_at_the_end(self):
        out, rc, se = self.run_scenario(self.app(""))
        report = self.assertEvidence(out, "app-failed", "error-dialog", rc=rc, stderr=se)
        self.assertIn('"%s"' % TITLE, report["reason"], "the reason names the dialog's title")
        self.assertIn("at the end of the run", report["reason"])
        self.assertFalse(self.final_dialogs_check(report)["ok"])
        at_end = [(d["title"], d["classification"]) for d in self.events(out, "dialog")
                  if d["when"] == "final checks"]
        self.assertIn((TITLE, "error"), at_end)
        self.assertIn(("KSR Test App", "main"), at_end)
        first = [d for d in self.events(out, "dialog") if d["when"] == "first look"]
        self.assertNotIn(TITLE, [d["title"] for d in first], "the dialog came during the steps")

    def test_error_dialog_closed_before_the_end_passes(self):
        out, rc, se = self.run_scenario(self.app("""\
            - click_element: "Close"
              checks:
                - no_window: "^%s$"
                  timeout_s: 10
            """ % TITLE))
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        self.assertTrue(self.final_dialogs_check(report)["ok"])
        at_end = [d["title"] for d in self.events(out, "dialog") if d["when"] == "final checks"]
        self.assertIn("KSR Test App", at_end)
        self.assertNotIn(TITLE, at_end)

    def test_first_run_prompt_seen_only_at_the_end_is_a_concern(self):
        out, rc, se = self.run_scenario("""\
            name: late-welcome
            launch: ${KSR_TESTAPP}
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 30
            settle_s: 0.5
            atspi: false
            steps:
              - shell: zenity --info --title "Welcome to KSR" --text x </dev/null >/dev/null 2>&1 &
              - wait_window: "^Welcome to KSR$"
            """)
        report = self.assertEvidence(out, "pass-with-concerns", "completed", rc=rc, stderr=se)
        self.assertEqual([c["code"] for c in report["concerns"]], ["first-run-prompt"])
        self.assertIn("at the end of the run", report["concerns"][0]["message"])

    def test_failed_step_diagnosis_names_the_error_dialog_as_context(self):
        out, rc, se = self.run_scenario(self.app("""\
            - shell: exit 3
            """))
        report = self.assertEvidence(out, "app-failed", "step-failed", rc=rc, stderr=se)
        diagnosis = [s for s in report["stages"] if s["name"] == "diagnosis"]
        self.assertEqual(len(diagnosis), 1, report["stages"])
        self.assertIn('an error dialog "%s"' % TITLE, diagnosis[0]["reason"])
        seen = [(d["title"], d["classification"]) for d in self.events(out, "dialog")
                if d["when"] == "diagnosis"]
        self.assertEqual(seen, [(TITLE, "error")])

    def test_title_of_invalid_utf8_is_classified_and_the_evidence_parses(self):
        out, rc, se = self.run_scenario("""\
            name: raw-title
            launch: ${KSR_TESTAPP}
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 30
            settle_s: 0.5
            atspi: false
            steps:
              - shell: python3 ${KSR_RAWTITLE} </dev/null >/dev/null 2>&1 &
              - wait_window: "^Error "
            """)
        # assertEvidence reads report.json as UTF-8 JSON (and validates it)
        report = self.assertEvidence(out, "app-failed", "error-dialog", rc=rc, stderr=se)
        repaired = "Error \\xff\\xfe"  # the bytes said, as text: lossless
        self.assertIn('"%s"' % repaired, report["reason"])
        at_end = [(d["title"], d["classification"]) for d in self.events(out, "dialog")
                  if d["when"] == "final checks"]
        self.assertIn((repaired, "error"), at_end)
        for name in ("report.json", "trace.jsonl"):
            with open(os.path.join(out, name), "rb") as f:
                data = f.read()
            data.decode("utf-8")  # strict: raises on an invalid byte
            self.assertNotIn(b"\xff", data, name)
        with open(os.path.join(out, "report.json"), encoding="utf-8") as f:
            json.load(f)

    def test_title_of_invalid_utf8_at_first_look(self):
        # the hostile window is up before the app starts: the first look sees it
        out, rc, se = self.run_scenario("""\
            name: raw-title-first-look
            launch: python3 ${KSR_RAWTITLE} --background </dev/null && exec ${KSR_TESTAPP}
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 30
            settle_s: 0.5
            atspi: false
            """)
        report = self.assertEvidence(out, "app-failed", "error-dialog", rc=rc, stderr=se)
        self.assertIn('"Error \\xff\\xfe"', report["reason"])
        self.assertIn("at first look", report["reason"])
        first = [(d["title"], d["classification"]) for d in self.events(out, "dialog")
                 if d["when"] == "first look"]
        self.assertIn(("Error \\xff\\xfe", "error"), first)


if __name__ == "__main__":
    unittest.main()
