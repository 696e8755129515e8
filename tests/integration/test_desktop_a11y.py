"""Desktop mode, whole (issue #37, docs/scenario.md#desktop-mode): the
accessibility rung on spawned tools (the newest tool, or the one `tool:`
names), a tool started from its .desktop entry (the test's own entry, in a
temporary data folder put first in XDG_DATA_DIRS: --xvfb gives the run a
private, empty XDG_DATA_HOME), the per-tool probe and dialog rules, and the
report's list of tools. Real Xvfb + openbox (--xvfb), the real accessibility
bus and real apps: the GTK 3 test app and featherpad (Qt 5)."""

import os
import shutil
import textwrap
import unittest

import ksr


ENABLE_MS = 1500  # --name-dialog: OK turns sensitive this long after the name has text
ERROR_TITLE = "Error: could not save"


def step_rows(report):
    return {s["index"]: s for s in report["steps"]}


def tool_events(out):
    return {e["as"]: e for e in ksr.read_trace(out) if e.get("event") == "tool"}


class DesktopA11y(ksr.KsrTestCase):

    def setUp(self):
        super().setUp()
        if not shutil.which("featherpad"):
            self.fail("featherpad is not installed (scripts/setup.sh deps)")
        self.data_home = os.path.join(self.tmp, "data")
        os.makedirs(os.path.join(self.data_home, "applications"))

    def entry(self, desktop_id, body):
        path = os.path.join(self.data_home, "applications", desktop_id)
        with open(path, "w") as f:
            f.write(textwrap.dedent(body))
        return path

    def env(self, **extra):
        # Qt 5 joins the bus where the root names it (the spawn publishes it);
        # ALWAYS_ON as test_atspi's featherpad run has it, for a loaded machine.
        extra.setdefault("KSR_TESTAPP", ksr.TESTAPP)
        extra.setdefault("XDG_DATA_DIRS", self.data_home + ":" + os.environ.get(
            "XDG_DATA_DIRS", "/usr/local/share:/usr/share"))
        extra.setdefault("QT_LINUX_ACCESSIBILITY_ALWAYS_ON", "1")
        return super().env(**extra)

    def run_desktop(self, text, verdict, outcome):
        path = self.scenario(textwrap.dedent(text))
        out = self.out()
        rc, _so, se, _el = self.run_rt(["run", "--xvfb", path], out=out, timeout=240)
        self.assertNoSanitizerReport(se)
        report = self.assertEvidence(out, verdict, outcome, rc=rc, stderr=se)
        return out, report

    def test_gtk_and_qt_tools_clicked_by_name(self):
        # featherpad from the test's own entry: Exec with a field code (%U,
        # dropped: no files) and a quoted argument, Path (the folder the
        # tool runs in), StartupWMClass (the window waited for: the step
        # gives no window: and no process:).
        work = os.path.join(self.tmp, "pad-folder")
        os.makedirs(work)
        self.entry("ksr-pad.desktop", """\
            [Desktop Entry]
            Type=Application
            Name=KSR Pad
            Exec=featherpad "--standalone" %U
            Path=WORK
            StartupWMClass=featherpad
            Terminal=false
            """.replace("WORK", work))
        out, report = self.run_desktop("""\
            name: desktop-a11y
            desktop: true
            settle_s: 1
            steps:
              - spawn: {command: '${KSR_TESTAPP} --title "KSR Tool"', window: ^KSR Tool$, process: ^ksr-testapp$, as: gtk}
              - click_element: "Enable feature"
                expect_state: "Enable feature checked"
              - spawn: {desktop_entry: ksr-pad, as: pad}
                timeout_s: 60
              - click_element: "File"
                role: menu item
                checks:
                  - state: {name: Save As, role: menu item, state: showing}
              - key: Escape
              - click_element: "Press me"
                tool: gtk
                checks:
                  - element: "Pressed 1"
              - kill: pad
              - kill: gtk
            """, "pass", "completed")
        rows = step_rows(report)
        tools = tool_events(out)
        self.assertEqual(sorted(tools), ["gtk", "pad"], tools)
        gtk, pad = tools["gtk"], tools["pad"]
        # each tool probed under its own name
        self.assertEqual(gtk["probe"]["status"], "ok", gtk)
        self.assertEqual(pad["probe"]["status"], "ok", pad)
        self.assertEqual(pad["probe"]["toolkit"], "Qt", pad)
        self.assertIn("gtk", gtk["probe"]["toolkit"].lower(), gtk)
        for t in (gtk, pad):
            self.assertTrue(os.path.isfile(os.path.join(out, t["probe"]["artifact"])), t)
        # the pad came from the entry, in its Path, with %U dropped
        self.assertEqual(pad["desktop_entry"],
                         os.path.join(self.data_home, "applications", "ksr-pad.desktop"))
        self.assertEqual(pad["command"], "cd -- '%s' && exec 'featherpad' '--standalone'"
                         % work, pad)
        self.assertEqual(pad["window"]["class"].lower(), "featherpad", pad)
        # every rung-2 step acted on the tool it meant: the newest, or tool:
        self.assertEqual((rows[2]["rung"], rows[2]["element"]["pid"]),
                         ("element", gtk["window"]["pid"]), rows[2])
        self.assertEqual(rows[2]["checks"][0]["status"], "held", rows[2])
        self.assertEqual(rows[4]["element"]["pid"], pad["window"]["pid"], rows[4])
        self.assertEqual(rows[4]["checks"][0]["status"], "held", rows[4])
        self.assertEqual(rows[6]["element"]["pid"], gtk["window"]["pid"], rows[6])
        self.assertEqual(rows[6]["checks"][0]["status"], "held", rows[6])
        # the report's tools
        self.assertEqual([t["as"] for t in report["tools"]], ["gtk", "pad"], report["tools"])
        self.assertEqual(report["tools"][1]["probe"], "ok", report["tools"])
        with open(os.path.join(out, "report.md")) as f:
            md = f.read()
        self.assertIn("ksr-pad.desktop", md)

    def test_desktop_entry_terminal_is_refused(self):
        self.entry("ksr-term.desktop", """\
            [Desktop Entry]
            Type=Application
            Name=KSR Term
            Exec=sh
            Terminal=true
            """)
        _out, report = self.run_desktop("""\
            name: desktop-term
            desktop: true
            settle_s: 0.2
            steps:
              - spawn: {desktop_entry: ksr-term.desktop, as: t}
            """, "app-failed", "step-failed")
        self.assertIn("Terminal=true, which spawn does not support", report["reason"])

    def test_a_tool_with_a_first_run_dialog_is_a_concern(self):
        _out, report = self.run_desktop("""\
            name: desktop-first-run
            desktop: true
            settle_s: 1
            atspi: false
            steps:
              - spawn: {command: '${KSR_TESTAPP} --title "KSR Tool" --first-run-dialog "Welcome to KSR Tool"', window: ^KSR Tool$, as: notes}
              - kill: notes
            """, "pass-with-concerns", "completed")
        concerns = [(c["code"], c["message"]) for c in report["concerns"]]
        self.assertEqual([c[0] for c in concerns], ["first-run-prompt"], concerns)
        self.assertIn('"Welcome to KSR Tool"', concerns[0][1])
        self.assertIn("after the tool 'notes' (spawned at line 6) settled", concerns[0][1])


    def test_click_on_a_tool_waits_for_the_control_under_the_point(self):
        """Readiness's control-under-the-point check on a spawned tool: the
        GTK tool's modal "Name It" dialog enables OK ENABLE_MS after its name
        has text; the click on OK right after typing waits for it (the ready
        row names OK, sensitive), so the tool takes the click. The same
        tool's probe summary lists its window's name tidied ("KSR  Tool "
        reads "KSR Tool")."""
        rec = os.path.join(self.tmp, "rec.txt")
        out, report = self.run_desktop("""\
            name: desktop-ready
            desktop: true
            settle_s: 1
            targets:
              ok: [0.5, 0.75]
            steps:
              - spawn: {command: '${KSR_TESTAPP} --title "KSR  Tool " --name-dialog %d --no-cursor-blink --record %s', window: ^KSR  Tool $, process: ^ksr-testapp$, as: namer}
              - type: "hello"
              - click: ok
                checks:
                  - no_window: ^Name It$
                    timeout_s: 1
              - kill: namer
            """ % (ENABLE_MS, rec), "pass-with-concerns", "completed")
        # the dialog is open once the spawn settles: the one concern is that
        self.assertEqual([c["code"] for c in report["concerns"]], ["unexpected-dialog"],
                         report["concerns"])
        with open(rec) as f:
            self.assertIn("confirmed:hello", f.read().splitlines(), "the tool took the click")
        click = step_rows(report)[3]
        self.assertEqual(click["details"]["window_title"], "Name It", click)
        self.assertEqual(click["details"]["ready"]["control"],
                         {"name": "OK", "role": "push button", "sensitive": True,
                          "showing": True}, click["details"]["ready"])
        names = [c["name"] for c in tool_events(out)["namer"]["probe"]["controls"]]
        self.assertIn("KSR Tool", names)
        self.assertEqual([n for n in names if n != " ".join(n.split())], [], names)

    def test_a_tools_error_dialog_fails_the_run_naming_the_tool(self):
        """A spawned tool's error dialog, opened by a step (--error-dialog-on-
        press) and still up at the end: app-failed error-dialog, the reason
        naming the dialog and the tool."""
        out, report = self.run_desktop("""\
            name: desktop-error
            desktop: true
            settle_s: 1
            steps:
              - spawn: {command: '${KSR_TESTAPP} --title "KSR Tool" --error-dialog "%s" --error-dialog-on-press', window: ^KSR Tool$, process: ^ksr-testapp$, as: saver}
              - click_element: "Press me"
              - wait_window: "^%s$"
            """ % (ERROR_TITLE, ERROR_TITLE), "app-failed", "error-dialog")
        self.assertIn('"%s"' % ERROR_TITLE, report["reason"])
        self.assertIn("'saver'", report["reason"])


class DesktopA11yLoad(ksr.KsrTestCase):
    needs_testapp = False

    def validate(self, text):
        path = self.scenario(textwrap.dedent(text))
        rc, so, se, _el = self.run_rt(["validate", path])
        return path, rc, so + se

    def test_tool_naming_no_earlier_spawn_is_invalid(self):
        path, rc, said = self.validate("""\
            name: t
            desktop: true
            steps:
              - spawn: {command: zenity --info, window: ^Info$, as: info}
              - click_element: "OK"
                tool: inof
              - click_element: "OK"
                tool: later
              - spawn: {command: xterm, window: ^xterm$, as: later}
            """)
        self.assertEqual(rc, 2, said)
        self.assertIn("%s:6:11: tool: 'inof' names no earlier spawn step's as: "
                      "(did you mean 'info'?)" % path, said)
        self.assertIn("%s:8:11: tool: 'later' names no earlier spawn step's as:" % path, said)

    def test_tool_outside_desktop_mode_is_invalid(self):
        path, rc, said = self.validate("""\
            name: t
            launch: xterm
            window: xterm
            steps:
              - key: Return
                tool: x
            """)
        self.assertEqual(rc, 2, said)
        self.assertIn("%s:6:11: tool: only in desktop mode (desktop: true)" % path, said)


if __name__ == "__main__":
    unittest.main()
