"""First-run screens wherever they are (docs/scenario.md#dialogs), against real
apps on the runtime's own --xvfb session and its real accessibility bus:

- drawn inside the main window (tests/app/ksr-welcome.c: a heading, a
  named panel or a selected page tab in a window with a plain title), read
  on the bus and named with its role: first-run-prompt; a plain main window (a hidden "Sign in"
  heading, a "Documents" heading) still passes; first_run_prompts: replaces
  the words inside windows too; atspi: false, or an app off the bus (xterm),
  skips the read with a note and passes;
- the window the scenario waits for: its own title ("Welcome to ... — ...",
  as Firefox's) and a dialog-type app window (zenity, as Inkscape's Quick
  Setup) are first-run prompts, reported once;
- a crash-recovery dialog (zenity "Automatic Crash Recovery" beside the app)
  is a recovery-prompt concern, not an error dialog; recovery_prompts: []
  gives it back to the error words."""

import os
import shutil
import textwrap
import unittest

import ksr

WELCOME = os.environ.get("KSR_WELCOME", "")


class FirstRunScreens(ksr.KsrTestCase):

    def setUp(self):
        super().setUp()
        if not WELCOME or not os.access(WELCOME, os.X_OK):
            self.fail("KSR_WELCOME is not an executable test app: %r" % WELCOME)

    def run_scenario(self, text, out="out"):
        path = self.scenario(textwrap.dedent(text))
        out = self.out(out)
        rc, _so, se, _el = self.run_rt(["run", "--xvfb", path], out=out, timeout=120)
        self.assertNoSanitizerReport(se)
        return out, rc, se

    def welcome_app(self, args, extra=""):
        return self.run_scenario("""\
            launch: %s %s
            process: ^ksr-welcome$
            window: ^KSR Notes$
            launch_timeout_s: 30
            settle_s: 1
            """ % (WELCOME, args) + textwrap.dedent(extra))

    def codes(self, report):
        return [c["code"] for c in report["concerns"]]

    def events(self, out, name):
        return [e for e in ksr.read_trace(out) if e.get("event") == name]

    def first_look_note(self, report):
        return ksr.stage(report, "first-look")["reason"]

    # --- inside the main window -------------------------------------------

    def test_heading_inside_the_main_window_is_a_first_run_prompt(self):
        out, rc, se = self.welcome_app("--heading \"Welcome! Let's get started\"")
        report = self.assertEvidence(out, "pass-with-concerns", "completed", rc=rc, stderr=se)
        self.assertEqual(self.codes(report), ["first-run-prompt"], report["concerns"])
        self.assertEqual(report["concerns"][0]["message"],
                         "a first-run prompt \"Welcome! Let's get started\" (accessibility "
                         "role heading in the window \"KSR Notes\") is on screen at first look")
        nodes = self.events(out, "dialog.node")
        self.assertEqual([(n["role"], n["name"], n["classification"]) for n in nodes],
                         [("heading", "Welcome! Let's get started", "first-run")], nodes)
        self.assertEqual(nodes[0]["path"],
                         "/frame[KSR Notes]/filler/heading[Welcome! Let's get started]")
        self.assertEqual(nodes[0]["window"], "KSR Notes")
        # the window itself is the app's, plainly titled (at first look; the
        # final checks look again, docs/scenario.md#dialogs)
        dialogs = [d for d in self.events(out, "dialog") if d["when"] == "first look"]
        self.assertEqual([(d["title"], d["classification"]) for d in dialogs],
                         [("KSR Notes", "main")])
        self.assertIn("landmarks of", self.first_look_note(report))

    def test_named_panel_inside_the_main_window_is_a_first_run_prompt(self):
        out, rc, se = self.welcome_app('--panel "Set up your mail account"')
        report = self.assertEvidence(out, "pass-with-concerns", "completed", rc=rc, stderr=se)
        self.assertEqual(self.codes(report), ["first-run-prompt"], report["concerns"])
        self.assertIn('"Set up your mail account" (accessibility role panel',
                      report["concerns"][0]["message"])

    def test_selected_page_tab_is_read_and_the_others_are_not(self):
        # as Inkscape 1.2's first start: its selected tab is "Quick Setup"
        out, rc, se = self.welcome_app('--tab "Quick Setup"')
        report = self.assertEvidence(out, "pass-with-concerns", "completed", rc=rc, stderr=se)
        self.assertEqual(self.codes(report), ["first-run-prompt"], report["concerns"])
        self.assertIn('"Quick Setup" (accessibility role page tab',
                      report["concerns"][0]["message"])
        # the tab "Welcome" beside it is not selected: its page is not on screen
        self.assertEqual([n["name"] for n in self.events(out, "dialog.node")], ["Quick Setup"])

    def test_plain_main_window_passes(self):
        # a heading "Documents", a label "Ready", a "Sign in" heading that is
        # never shown, a notebook whose tab "Welcome" is not the selected one:
        # nothing on screen is a first-run screen
        out, rc, se = self.welcome_app('--hidden "Sign in" --tab "Canvas"')
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        self.assertEqual(report["concerns"], [])
        self.assertEqual(self.events(out, "dialog.node"), [])
        self.assertRegex(self.first_look_note(report), r"\d+ landmarks of \d+ accessible nodes")

    def test_scenario_list_replaces_the_words_inside_windows(self):
        out, rc, se = self.welcome_app("--heading \"Welcome! Let's get started\"",
                                       'first_run_prompts: ["(?i)^tip of the day$"]\n')
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        self.assertEqual(report["concerns"], [])

    def test_no_accessibility_skips_the_read_with_a_note(self):
        out, rc, se = self.welcome_app("--heading \"Welcome! Let's get started\"",
                                       "atspi: false\n")
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        self.assertIn("landmarks not read (atspi: false)", self.first_look_note(report))

    def test_app_off_the_bus_skips_the_read_with_a_note(self):
        # xterm loads no accessibility bridge: nothing to read, nothing fails
        out, rc, se = self.run_scenario("""\
            launch: exec xterm -T "KSR Terminal"
            process: ^xterm$
            window: ^KSR Terminal$
            launch_timeout_s: 30
            settle_s: 1
            """)
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        self.assertIn("landmarks not read (the app is not on the accessibility bus)",
                      self.first_look_note(report))

    # --- the window waited for --------------------------------------------

    def test_main_window_title_is_classified(self):
        # as Firefox's "Welcome to Firefox — Mozilla Firefox"; its frame on the
        # bus has the same name, which must not be a second concern
        out, rc, se = self.run_scenario("""\
            launch: %s --title "Welcome to KSR Notes — KSR Notes"
            process: ^ksr-welcome$
            window: KSR Notes$
            launch_timeout_s: 30
            settle_s: 1
            """ % WELCOME)
        report = self.assertEvidence(out, "pass-with-concerns", "completed", rc=rc, stderr=se)
        self.assertEqual(self.codes(report), ["first-run-prompt"], report["concerns"])
        self.assertEqual(report["concerns"][0]["message"],
                         "a first-run prompt \"Welcome to KSR Notes — KSR Notes\" (the app's "
                         "window) is on screen at first look")
        dialogs = self.events(out, "dialog")
        self.assertEqual([(d["classification"], d["when"]) for d in dialogs],
                         [("first-run", "first look"), ("main", "final checks")], dialogs)
        self.assertEqual(len(report["concerns"]), 1, "the app's window is judged at first look only")

    def test_dialog_type_app_window_is_a_first_run_prompt(self):
        # as Inkscape's Quick Setup: a dialog-type window matching window:
        if not shutil.which("zenity"):
            self.skipTest("zenity is not installed")
        out, rc, se = self.run_scenario("""\
            launch: zenity --info --title "Welcome! Let's set up a few things" --text "Theme"
            process: ^zenity$
            window: set up a few things
            launch_timeout_s: 30
            settle_s: 1
            """)
        report = self.assertEvidence(out, "pass-with-concerns", "completed", rc=rc, stderr=se)
        self.assertEqual(self.codes(report), ["first-run-prompt"], report["concerns"])
        self.assertIn("(the app's window)", report["concerns"][0]["message"])

    # --- crash recovery ---------------------------------------------------

    RECOVERY = """\
        launch: >-
          zenity --question --title "Automatic Crash Recovery"
          --text "Some projects were not saved properly the last time Audacity was run." &
          until xwininfo -name "Automatic Crash Recovery" >/dev/null 2>&1; do sleep 0.1; done;
          exec %s
        process: ^ksr-testapp$
        window: ^KSR Test App$
        launch_timeout_s: 30
        settle_s: 1
        """ % ksr.TESTAPP

    def test_crash_recovery_dialog_is_a_recovery_prompt(self):
        if not shutil.which("zenity") or not shutil.which("xwininfo"):
            self.skipTest("zenity or xwininfo is not installed")
        out, rc, se = self.run_scenario(self.RECOVERY)
        report = self.assertEvidence(out, "pass-with-concerns", "completed", rc=rc, stderr=se)
        self.assertEqual(self.codes(report), ["recovery-prompt"], report["concerns"])
        self.assertIn('"Automatic Crash Recovery"', report["concerns"][0]["message"])
        dialogs = self.events(out, "dialog")
        self.assertIn(("Automatic Crash Recovery", "recovery"),
                      [(d["title"], d["classification"]) for d in dialogs])

    def test_recovery_prompts_empty_gives_it_back_to_the_error_words(self):
        if not shutil.which("zenity") or not shutil.which("xwininfo"):
            self.skipTest("zenity or xwininfo is not installed")
        out, rc, se = self.run_scenario(self.RECOVERY + "recovery_prompts: []\n")
        report = self.assertEvidence(out, "app-failed", "error-dialog", rc=rc, stderr=se)
        self.assertIn('"Automatic Crash Recovery"', report["reason"])


if __name__ == "__main__":
    unittest.main()
