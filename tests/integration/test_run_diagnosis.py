"""Diagnosis-dependent outcomes (docs/scenario.md#logs-and-diagnosis,
docs/report.md#verdicts-outcomes-and-concerns): a crash loop told apart from a
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

    # --- helpers for the cases below -------------------------------------

    def codes(self, report):
        return [c["code"] for c in report["concerns"]]

    def events(self, out, name):
        return [e for e in ksr.read_trace(out) if e.get("event") == name]

    def app_scenario(self, name, args, extra=""):
        return """\
            name: %s
            launch: '${KSR_TESTAPP} %s'
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 30
            settle_s: 1
            atspi: false
            %s
            """ % (name, args, extra)

    # --- crash loop details ----------------------------------------------

    def test_crash_loop_reason_and_recheck(self):
        crashloop = os.path.join(ksr.SOURCE_DIR, "tests", "app", "crashloop.sh")
        path, out, rc, se, el = self.run_scenario("""\
            name: crash-loop-detail
            launch: sh ${KSR_IT_CRASHLOOP} ${KSR_TESTAPP} --crash-after 300
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 30
            settle_s: 3
            atspi: false
            """, env=self.env(KSR_IT_CRASHLOOP=crashloop))
        report = self.assertEvidence(out, "app-failed", "crash-loop", rc=rc, stderr=se)
        self.assertEqual([f["outcome"] for f in report["failures"]], ["crash-loop"],
                         "one failure, refined by diagnosis")
        self.assertIn("keeps crashing and coming back", report["reason"])
        self.assertRegex(report["reason"], r"new instance \(pid \d+ matching \^ksr-testapp\$\)")
        recheck = self.events(out, "crash_recheck")
        self.assertEqual(len(recheck), 1, recheck)
        self.assertTrue(recheck[0]["came_back"])
        self.assertNotIn(report["app"]["pid"], recheck[0]["new"], "the new pid is not the old one")
        self.assertIn("99-failure.png", [a["name"] for a in report["artifacts"]])
        self.assertEqual(ksr.png_size(os.path.join(out, "99-failure.png")), (1280, 720))
        self.assertIn("launch.log", [t["path"] for t in report["log_tails"]])
        self.assertEqual(ksr.stage(report, "diagnosis")["status"], "ok")

    def test_single_crash_is_not_a_loop(self):
        path, out, rc, se, el = self.run_scenario(self.app_scenario("one-crash",
                                                                    "--crash-after 300"),
                                                  )
        report = self.assertEvidence(out, "app-failed", "crashed", rc=rc, stderr=se)
        recheck = self.events(out, "crash_recheck")
        self.assertEqual([r["came_back"] for r in recheck], [False])
        # the runtime launched it: how it ended (through the launch shell's status),
        # and the shell's own report of it in launch.log, a crash signature
        self.assertRegex(report["reason"], r"signal 11\b.*SEGV")
        self.assertIn('launch.log shows "Segmentation fault', report["reason"])

    # --- dialogs ----------------------------------------------------------

    def test_zenity_error_dialog(self):
        path, out, rc, se, el = self.run_scenario("""\
            name: zenity-error
            launch: >-
              zenity --error --title Error --text "The profile is damaged" &
              exec ${KSR_TESTAPP}
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 30
            settle_s: 2
            atspi: false
            """)
        report = self.assertEvidence(out, "app-failed", "error-dialog", rc=rc, stderr=se)
        self.assertIn('"Error"', report["reason"])
        dialogs = self.events(out, "dialog")
        self.assertIn(("Error", "error"), [(d["title"], d["classification"]) for d in dialogs])
        self.assertIn(("KSR Test App", "main"),
                      [(d["title"], d["classification"]) for d in dialogs])
        self.assertIn("99-failure.png", [a["name"] for a in report["artifacts"]])

    def test_first_run_prompt_is_a_concern(self):
        path, out, rc, se, el = self.run_scenario(self.app_scenario(
            "first-run", '--first-run-dialog "Welcome to KSR Test App"'))
        report = self.assertEvidence(out, "pass-with-concerns", "completed", rc=rc, stderr=se)
        self.assertEqual(self.codes(report), ["first-run-prompt"])
        self.assertIn("Welcome to KSR Test App", report["concerns"][0]["message"])

    def test_updater_with_default_patterns_reported_once(self):
        # no updaters: key: the built-in pattern; settle reports it, first look does not again
        path, out, rc, se, el = self.run_scenario(self.app_scenario(
            "updater-default", '--updater-dialog "A new version is available"'))
        report = self.assertEvidence(out, "pass-with-concerns", "completed", rc=rc, stderr=se)
        self.assertEqual(self.codes(report), ["updater"])
        self.assertIn("after settle", report["concerns"][0]["message"])
        self.assertIn("A new version is available", report["concerns"][0]["message"])

    def test_unexpected_dialog_is_a_concern(self):
        path, out, rc, se, el = self.run_scenario(self.app_scenario(
            "unexpected", '--first-run-dialog "Preferences"'))
        report = self.assertEvidence(out, "pass-with-concerns", "completed", rc=rc, stderr=se)
        self.assertEqual(self.codes(report), ["unexpected-dialog"])
        self.assertIn('"Preferences"', report["concerns"][0]["message"])

    def test_scenario_patterns_replace_the_defaults(self):
        # error_dialogs set: "Kaputt" fails the run; first_run_prompts: [] turns the
        # default off, so "Welcome" is only an unexpected dialog -- and the error wins
        path, out, rc, se, el = self.run_scenario(self.app_scenario(
            "custom", '--error-dialog "Alles kaputt"',
            'error_dialogs: ["(?i)kaputt"]'))
        report = self.assertEvidence(out, "app-failed", "error-dialog", rc=rc, stderr=se)
        self.assertIn("Alles kaputt", report["reason"])

    # --- logs -------------------------------------------------------------

    def test_crash_signature_on_a_passing_run_is_a_concern(self):
        log = os.path.join(self.tmp, "app.log")
        path, out, rc, se, el = self.run_scenario("""\
            name: signature-pass
            launch: >-
              printf 'starting\\nworker 3: Segmentation fault (core dumped)\\nrestarted\\n'
              > ${KSR_IT_LOG}; exec ${KSR_TESTAPP}
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 30
            settle_s: 1
            atspi: false
            logs: ["${KSR_IT_LOG}"]
            """, env=self.env(KSR_IT_LOG=log))
        report = self.assertEvidence(out, "pass-with-concerns", "completed", rc=rc, stderr=se)
        self.assertEqual(self.codes(report), ["crash-signature"])
        msg = report["concerns"][0]["message"]
        self.assertIn(log, msg)
        self.assertIn("worker 3: Segmentation fault (core dumped)", msg)
        self.assertIn(log, [t["path"] for t in report["log_tails"]])
        arts = {a["name"]: a["kind"] for a in report["artifacts"]}
        self.assertEqual(arts.get("log-1.txt"), "log", arts)

    def test_clean_log_on_a_passing_run_is_not_a_concern(self):
        log = os.path.join(self.tmp, "app.log")
        with open(log, "w") as f:
            f.write("all good\nGtk-WARNING: theme parsing\n")
        path, out, rc, se, el = self.run_scenario(self.app_scenario(
            "clean-log", "", "logs: [%s]" % log))
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        self.assertEqual(report["log_tails"], [])

    def test_crash_signature_in_the_reason_of_a_crash(self):
        log = os.path.join(self.tmp, "app.log")
        path, out, rc, se, el = self.run_scenario("""\
            name: signature-crash
            launch: >-
              echo 'terminate called after throwing an instance of std::bad_alloc'
              > ${KSR_IT_LOG}; exec ${KSR_TESTAPP} --crash-after 300
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 30
            settle_s: 3
            atspi: false
            logs: ["${KSR_IT_LOG}", "${KSR_IT_MISSING}"]
            """, env=self.env(KSR_IT_LOG=log, KSR_IT_MISSING=os.path.join(self.tmp, "no.log")))
        report = self.assertEvidence(out, "app-failed", "crashed", rc=rc, stderr=se)
        self.assertIn("terminate called after throwing", report["reason"])
        self.assertIn("signal 11", report["reason"])
        sigs = self.events(out, "crash_signature")
        self.assertEqual([s["path"] for s in sigs], [log])
        arts = {a["name"]: a["kind"] for a in report["artifacts"]}
        self.assertEqual(arts.get("log-1.txt"), "log", arts)
        self.assertNotIn("log-2.txt", arts, "a missing log is not copied")
        with open(os.path.join(out, "log-1.txt")) as f:
            self.assertIn("std::bad_alloc", f.read())
        self.assertIn("no.log", ksr.stage(report, "diagnosis")["reason"],
                      "the missing log is named")
        self.assertEqual(report["concerns"], [], "a failing run's signature is no concern")

    # --- window lost ------------------------------------------------------

    def test_window_lost(self):
        path, out, rc, se, el = self.run_scenario(self.app_scenario(
            "window-lost", "--close-window-after 1500", "steps:\n              - sleep: 3"))
        # The window's destruction ends the sleep at once (docs/architecture.md,
        # "The app is watched"): the final checks never run.
        report = self.assertEvidence(out, "app-failed", "window-lost", rc=rc, stderr=se)
        self.assertEqual(report["final_checks"], [])
        self.assertEqual(ksr.stage(report, "final-checks")["status"], "skipped")
        self.assertIn("lives on without a window", report["reason"])


if __name__ == "__main__":
    unittest.main()
