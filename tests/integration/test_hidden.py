"""Hidden controls are not clickable by accident: click_element and the
element:/state: checks act only on controls that are showing, unless the step
says hidden_ok: true. Real mousepad (GTK3) on the runtime's own --xvfb session
and AT-SPI bus: the items of its File menu are in the tree while the menu is
closed, but not showing. Nothing is mocked."""

import os
import shutil
import unittest

import ksr

# GTK3 names the item with its accelerator's padding ("Save As...      ").
SAVE_AS = r"/^Save As\.\.\./"
HEAD = """\
launch: mousepad --disable-server
process: ^mousepad$
window: Mousepad
settle_s: 1
steps:
"""


class HiddenMenuItem(ksr.KsrTestCase):
    def setUp(self):
        super().setUp()
        if not shutil.which("mousepad"):
            self.fail("mousepad is not installed (scripts/setup.sh deps)")

    def run_scenario(self, steps):
        sc = self.scenario(HEAD + steps)
        return self.run_rt(["run", "--xvfb", sc], out=self.out(), timeout=120)

    def save_scenario(self, modifiers):
        # A typed document and File > Save (menu closed): a click that acts
        # writes the file; the test reads the file system, not the report.
        self.note = os.path.join(self.tmp, "note.txt")
        return self.scenario("""\
launch: mousepad --disable-server %s
process: ^mousepad$
window: Mousepad
settle_s: 1
steps:
  - type: hello
  - click_element: '/^Save *$/'
    role: menu item
%s""" % (self.note, modifiers))

    def test_closed_menu_item_is_not_clicked(self):
        sc = self.save_scenario("    timeout_s: 2\n")
        rc, _so, se, _t = self.run_rt(["run", "--xvfb", sc], out=self.out(), timeout=120)
        report = self.assertEvidence(self.out(), "app-failed", "step-failed", rc=rc, stderr=se)
        self.assertNoSanitizerReport(se)
        reason = report["reason"]
        self.assertIn("not showing", reason)
        # the name as people read it (tidied, issue #32), not mousepad's "Save      "
        self.assertIn('menu item "Save" is not showing', reason)
        self.assertIn("hidden_ok", reason)
        self.assertTrue(ksr.names_line(reason, 7), reason)
        s1, s2 = report["steps"]
        self.assertEqual((s1["status"], s2["status"]), ("ok", "failed"), report["steps"])
        self.assertEqual(s2["element"]["role"], "menu item", s2)
        self.assertFalse(s2["element"]["showing"], s2)
        self.assertNotIn("action", s2["details"], "a hidden control was acted on: %r" % s2)
        self.assertFalse(os.path.exists(self.note), "the refused Save wrote the file")

    def test_hidden_ok_saves(self):
        sc = self.save_scenario("    hidden_ok: true\n    timeout_s: 5\n")
        rc, _so, se, _t = self.run_rt(["run", "--xvfb", sc], out=self.out(), timeout=120)
        report = self.assertEvidence(self.out(), "pass", "completed", rc=rc, stderr=se)
        self.assertNoSanitizerReport(se)
        s2 = report["steps"][1]
        self.assertEqual((s2["backend"], s2["details"]["action"]), ("atspi", "Click"), s2)
        self.assertFalse(s2["element"]["showing"], s2)
        with open(self.note) as f:
            self.assertEqual(f.read().strip(), "hello")

    def test_hidden_ok_opens_save_as(self):
        rc, _so, se, _t = self.run_scenario("""\
  - click_element: '%s'
    role: menu item
    hidden_ok: true
    timeout_s: 5
    checks:
      - window: ^Save As$
        timeout_s: 10
""" % SAVE_AS)
        report = self.assertEvidence(self.out(), "pass", "completed", rc=rc, stderr=se)
        self.assertNoSanitizerReport(se)
        (step,) = report["steps"]
        self.assertEqual(step["backend"], "atspi", step)
        self.assertEqual(step["element"]["role"], "menu item", step)
        self.assertFalse(step["element"]["showing"], step)
        self.assertEqual(step["checks"][0]["status"], "held", step)
        self.assertIn("Save As", step["checks"][0]["detail"], step)

    def test_element_check_on_hidden_control_fails(self):
        rc, _so, se, _t = self.run_scenario("""\
  - sleep: 0.1
    checks:
      - element: '%s'
        timeout_s: 1
""" % SAVE_AS)
        report = self.assertEvidence(self.out(), "app-failed", "check-failed", rc=rc,
                                     stderr=se)
        self.assertIn("not showing", report["reason"])
        self.assertIn('menu item "Save As...', report["reason"])
        (step,) = report["steps"]
        self.assertEqual(step["checks"][0]["status"], "failed", step)

    def test_open_menu_shows_the_item(self):
        # Opened, the menu's item is showing: the same check holds, and a state
        # check of showing itself answers for the closed menu's item too.
        rc, _so, se, _t = self.run_scenario("""\
  - sleep: 0.1
    checks:
      - state: {name: '%s', role: menu item, state: visible}
  - click_element: File
    role: menu
    checks:
      - element: '%s'
        timeout_s: 5
      - state: {name: '%s', role: menu item, state: sensitive}
""" % (SAVE_AS, SAVE_AS, SAVE_AS))
        report = self.assertEvidence(self.out(), "pass", "completed", rc=rc, stderr=se)
        self.assertNoSanitizerReport(se)
        s1, s2 = report["steps"]
        self.assertEqual(s1["checks"][0]["status"], "held", s1)
        self.assertEqual([c["status"] for c in s2["checks"]], ["held", "held"], s2)


if __name__ == "__main__":
    unittest.main()
