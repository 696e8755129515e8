"""Issue #17 against real apps on the runtime's own AT-SPI bus: `role: push button`
finds the buttons of GTK 3 (ksr-testapp), GTK 4 (gnome-calculator) and Qt 5
(kcalc); a name that matches nothing is quoted with the closest controls the walk
saw; `text:` reads a spin button's text, a GTK 3 entry, mousepad's text view,
gnome-calculator's display and a Qt line edit (featherpad's search field), and
says what the text was when it does not hold; MCP's a11y.text reads the same.
Nothing is mocked."""

import json
import os
import shutil
import subprocess
import unittest

import ksr

QT_ENV = {"QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1", "QT_ACCESSIBILITY": "1"}


def checks_of(report):
    return [(s["line"], c) for s in report["steps"] for c in s.get("checks", [])]


def need(test, binary):
    if not shutil.which(binary):
        test.fail("%s is not installed (scripts/setup.sh deps)" % binary)


class TestAppNamesAndText(ksr.KsrTestCase):
    def test_near_miss_is_quoted_with_the_closest_controls(self):
        sc = self.scenario("""\
launch: %s
window: KSR Test App
settle_s: 0.2
atspi: false
steps:
  - click_element: "press me"
    timeout_s: 1
""" % ksr.TESTAPP)
        rc, _so, se, _t = self.run_rt(["run", "--xvfb", sc], out=self.out())
        report = self.assertEvidence(self.out(), "app-failed", "step-failed", rc=rc, stderr=se)
        self.assertNoSanitizerReport(se)
        self.assertIn('no control named "press me"', report["reason"])
        self.assertIn('closest: "Press me" (push button)', report["reason"])
        with open(os.path.join(self.out(), "report.md")) as f:
            self.assertIn('closest: "Press me" (push button)', f.read())

    def test_wrong_role_names_the_control_with_its_role(self):
        sc = self.scenario("""\
launch: %s
window: KSR Test App
settle_s: 0.2
atspi: false
steps:
  - click_element: "Press me"
    role: push button
  - click_element: "Press me"
    role: check box
    timeout_s: 1
""" % ksr.TESTAPP)
        rc, _so, se, _t = self.run_rt(["run", "--xvfb", sc], out=self.out())
        report = self.assertEvidence(self.out(), "app-failed", "step-failed", rc=rc, stderr=se)
        s1 = report["steps"][0]
        self.assertEqual((s1["status"], s1["element"]["role"]), ("ok", "push button"), s1)
        self.assertIn('with role "check box"', report["reason"])
        self.assertIn('closest: "Press me" (push button)', report["reason"])

    def test_text_of_a_spin_button_and_an_entry(self):
        sc = self.scenario("""\
launch: %s --spin
window: KSR Test App
settle_s: 0.2
steps:
  - click: [0.5, 0.47]
    checks:
      - text: {name: Quantity, role: spin button, equals: "3"}
  - type: "hello world"
    checks:
      - text: {name: Text field, contains: "hello"}
      - text: {role: text, equals: "hello world"}
  - key: Tab
  - key: Up
    checks:
      - text: {name: Quantity, equals: "4"}
      - text: {name: Text field, matches: "^bye"}
        timeout_s: 1
""" % ksr.TESTAPP)
        rc, _so, se, _t = self.run_rt(["run", "--xvfb", sc], out=self.out())
        report = self.assertEvidence(self.out(), "app-failed", "check-failed", rc=rc, stderr=se)
        self.assertNoSanitizerReport(se)
        got = [(c["status"], c["detail"]) for _l, c in checks_of(report)]
        # what a person reads: the spin button's text (issue #32), not its Value
        self.assertEqual(got[0], ("held", 'the text of spin button "Quantity" is "3"'))
        self.assertEqual(got[1][0], "held")
        self.assertEqual(got[2], ("held", 'the text of text "Text field" is "hello world"'))
        # the value was read live: Up made it 4
        self.assertEqual(got[3], ("held", 'the text of spin button "Quantity" is "4"'))
        self.assertEqual(got[4][0], "failed")
        self.assertIn('is "hello world" (expected to match "^bye")', got[4][1])
        self.assertIn('is "hello world"', report["reason"])


class Gtk3TextView(ksr.KsrTestCase):
    needs_testapp = False

    def test_mousepad_text_view(self):
        need(self, "mousepad")
        sc = self.scenario("""\
launch: exec mousepad
process: ^mousepad$
window: Mousepad$
settle_s: 1
steps:
  - type: "hello text view"
    checks:
      - text: {role: text, contains: "hello text view"}
        timeout_s: 10
  - key: ctrl+s
    checks:
      - window: ^Save As$
        timeout_s: 15
  - click_element: "Cancel"
    role: push button
    checks:
      - no_window: ^Save As$
""")
        rc, _so, se, _t = self.run_rt(["run", "--xvfb", sc], out=self.out(), timeout=180)
        report = self.assertEvidence(self.out(), "pass", "completed", rc=rc, stderr=se)
        self.assertNoSanitizerReport(se)
        line, c = checks_of(report)[0]
        self.assertEqual(c["status"], "held")
        self.assertRegex(c["detail"], r'^the text of text "[^"]*" is "hello text view"$')


class Gtk4RolesAndDisplay(ksr.KsrTestCase):
    needs_testapp = False

    def test_calculator_push_buttons_and_display(self):
        need(self, "gnome-calculator")
        # GTK 4 calls its buttons "button": role: push button (the standard
        # name) finds them, and role: button (the toolkit's) still does.
        sc = self.scenario("""\
launch: gnome-calculator
window: Calculator
settle_s: 1
steps:
  - click_element: "1 1"
    role: push button
  - click_element: "2 2"
    role: push button
  - click_element: "× ×"
    role: button
  - click_element: "3 3"
    role: push button
    checks:
      - text: {role: text, equals: "12×3"}
        timeout_s: 10
  - click_element: "= ="
    role: push button
    checks:
      - text: {role: text, equals: "36"}
        timeout_s: 10
""")
        rc, _so, se, _t = self.run_rt(["run", "--xvfb", sc], out=self.out(), timeout=180)
        report = self.assertEvidence(self.out(), "pass", "completed", rc=rc, stderr=se)
        self.assertNoSanitizerReport(se)
        for s in report["steps"]:
            self.assertEqual(s["element"]["role"], "push button", s)
        details = [c["detail"] for _l, c in checks_of(report)]
        self.assertTrue(details[0].endswith('is "12×3"'), details)
        self.assertTrue(details[1].endswith('is "36"'), details)
        with open(os.path.join(self.out(), "atspi.json")) as f:
            tree = json.load(f)
        one = [n for n in tree["nodes"] if n["name"] == "1 1"][0]
        self.assertEqual((one["role"], one["toolkit_role"]), ("push button", "button"))


class QtRolesAndLineEdit(ksr.KsrTestCase):
    needs_testapp = False

    def test_kcalc_push_buttons(self):
        need(self, "kcalc")
        sc = self.scenario("""\
launch: kcalc
process: ^kcalc$
window: KCalc
settle_s: 1
steps:
  - click_element: "7"
    role: push button
  - click_element: "×"
    role: push button
  - click_element: "3"
    role: push button
  - click_element: "="
    role: push button
    checks:
      - state: {name: "21", role: frame, state: showing}
        timeout_s: 10
""")
        rc, _so, se, _t = self.run_rt(["run", "--xvfb", sc], out=self.out(), timeout=180,
                                      env=self.env(**QT_ENV))
        report = self.assertEvidence(self.out(), "pass", "completed", rc=rc, stderr=se)
        self.assertNoSanitizerReport(se)
        self.assertEqual(report["accessibility"]["app"]["toolkit"], "Qt")
        for s in report["steps"]:
            self.assertEqual(s["element"]["role"], "push button", s)

    def test_featherpad_line_edit(self):
        need(self, "featherpad")
        sc = self.scenario("""\
launch: featherpad
process: ^featherpad$
window: Untitled|FeatherPad
settle_s: 1
steps:
  - key: ctrl+f
  - type: needle
    checks:
      - text: {role: text, equals: needle}
        timeout_s: 10
      - text: {role: text, equals: haystack}
        timeout_s: 1
""")
        rc, _so, se, _t = self.run_rt(["run", "--xvfb", sc], out=self.out(), timeout=180,
                                      env=self.env(**QT_ENV))
        report = self.assertEvidence(self.out(), "app-failed", "check-failed", rc=rc, stderr=se)
        self.assertNoSanitizerReport(se)
        (_l1, held), (_l2, failed) = checks_of(report)
        self.assertEqual(held["status"], "held", held)
        self.assertTrue(held["detail"].endswith('is "needle"'), held)
        self.assertIn('is "needle" (expected to equal "haystack")', failed["detail"])


class McpText(ksr.KsrTestCase):
    """a11y.text over MCP stdio (newline-delimited JSON-RPC) on `mcp --xvfb`: the
    test app is launched there by scenario.run (keep_running), then read."""

    def test_a11y_text(self):
        yaml = ("launch: %s --spin\nwindow: KSR Test App\nsettle_s: 0.2\n"
                "keep_running: true\n" % ksr.TESTAPP)
        calls = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
             "params": {"name": "scenario.run",
                        "arguments": {"yaml": yaml, "out": self.out()}}},
            {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
             "params": {"name": "a11y_text",
                        "arguments": {"window": "^KSR Test App$", "name": "Quantity"}}},
            {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
             "params": {"name": "a11y.text",
                        "arguments": {"window": "^KSR Test App$", "name": "Quantiy"}}},
        ]
        p = subprocess.run([ksr.BIN, "mcp", "--xvfb"],
                           input="".join(json.dumps(r) + "\n" for r in calls),
                           capture_output=True, text=True, env=self.env(), timeout=180)
        self.assertNoSanitizerReport(p.stderr)
        replies = {r.get("id"): r for r in map(json.loads, p.stdout.splitlines())}
        run = replies[2]["result"]["structuredContent"]
        self.assertEqual(run["verdict"], "pass", run)
        ok, miss = replies[3]["result"], replies[4]["result"]
        self.assertFalse(ok.get("isError"), ok)
        self.assertEqual(ok["structuredContent"]["text"], "3")
        self.assertEqual(ok["structuredContent"]["from"], "text")
        self.assertEqual(ok["structuredContent"]["role"], "spin button")
        self.assertTrue(miss["isError"], miss)
        self.assertIn('closest: "Quantity" (spin button)', miss["content"][0]["text"])
        self.assertAppGone(["ksr-testapp"])


if __name__ == "__main__":
    unittest.main()
