"""Rung 2 (accessibility) against real apps on a real AT-SPI bus: the runtime's
own --xvfb session (private D-Bus session bus + at-spi-bus-launcher), the GTK3
test app, gnome-calculator (GTK4) and featherpad (Qt 5). Nothing is mocked."""

import json
import os
import shutil
import signal
import subprocess
import time
import unittest

import ksr


def steps_of(report):
    return report["steps"]


class AtspiTestApp(ksr.KsrTestCase):
    def test_click_button_and_checkbox(self):
        rec = os.path.join(self.tmp, "rec")
        sc = self.scenario("""\
launch: %s --record %s
window: KSR Test App
settle_s: 0.5
steps:
  - click_element: "Press me"
    checks:
      - file: %s
  - click_element: "Enable feature"
    role: check box
    expect_state: "Enable feature checked"
  - click_element: /^Pressed [0-9]+$/
    expect_effect: false
""" % (ksr.TESTAPP, rec, rec))
        rc, _so, se, _t = self.run_rt(["run", "--xvfb", sc], out=self.out())
        report = self.assertEvidence(self.out(), "pass", "completed", rc=rc, stderr=se)
        self.assertNoSanitizerReport(se)
        with open(rec) as f:
            lines = f.read().split()
        self.assertEqual(lines, ["pressed", "checked:1"])
        s1, s2, s3 = steps_of(report)
        # an action, no coordinate
        self.assertEqual((s1["backend"], s1["rung"], s1["pixel"]), ("atspi", "element", None))
        self.assertEqual(s1["element"]["role"], "push button")
        self.assertTrue(s1["element"]["path"].endswith("/push button[Press me]"), s1["element"])
        self.assertEqual(s2["element"]["role"], "check box")
        self.assertEqual(s2["checks"][0]["status"], "held")
        # the label has no action: the centre of its extents, through XTest
        self.assertEqual((s3["backend"], s3["rung"]), ("xtest", "element"))
        self.assertIsNotNone(s3["pixel"])
        # made ready at that point first, as any pointer step (docs/report.md)
        ready = s3["details"]["ready"]
        self.assertEqual(ready["answering"], "yes", ready)
        self.assertGreaterEqual(ready["quiet_ms"], 0, ready)
        w = s3["window"]
        self.assertTrue(w["x"] <= s3["pixel"]["x"] < w["x"] + w["w"], s3)
        self.assertTrue(w["y"] <= s3["pixel"]["y"] < w["y"] + w["h"], s3)
        # the probe: summary in the report, whole tree in atspi.json
        acc = report["accessibility"]
        self.assertEqual(acc["status"], "ok")
        self.assertEqual(acc["app"]["found_by"], "pid")
        self.assertEqual(acc["app"]["pid"], report["app"]["pid"])
        names = {(c["role"], c["name"]) for c in acc["controls"]}
        for want in [("push button", "Press me"), ("check box", "Enable feature"),
                     ("text", "Text field")]:
            self.assertIn(want, names)
        with open(os.path.join(self.out(), "atspi.json")) as f:
            tree = json.load(f)
        self.assertEqual(tree["nodes"][0]["parent"], -1)
        self.assertFalse(tree["walk"]["truncated"])
        self.assertIn("atspi.json", [a["name"] for a in report["artifacts"]])

    def test_missing_control_fails_the_step(self):
        sc = self.scenario("""\
launch: %s
window: KSR Test App
settle_s: 0.2
atspi: false
steps:
  - click_element: "No such button"
    timeout_s: 1
""" % ksr.TESTAPP)
        rc, _so, se, _t = self.run_rt(["run", "--xvfb", sc], out=self.out())
        report = self.assertEvidence(self.out(), "app-failed", "step-failed", rc=rc, stderr=se)
        self.assertIn("No such button", report["reason"])
        self.assertTrue(ksr.names_line(report["reason"], 6), report["reason"])
        probe = ksr.stage(report, "accessibility-probe")
        self.assertEqual(probe["status"], "skipped")
        self.assertIn("atspi: false", probe["reason"])

    def test_a_table_of_many_cells_is_counted_not_listed(self):
        """A node that may hold very many children (a table that manages its
        descendants, as a spreadsheet's sheet: the test app's "Many Cells",
        20000 cells made only when asked for) is asked its child count before
        its children: GetChildren would make the app build every cell. The
        probe's full walk is cut there."""
        rec = os.path.join(self.tmp, "rec")
        sc = self.scenario("""\
launch: %s --many-children 20000 --record %s
window: KSR Test App
settle_s: 0.5
steps:
  - click_element: "Press me"
""" % (ksr.TESTAPP, rec))
        rc, _so, se, _t = self.run_rt(["run", "--xvfb", sc], out=self.out(), timeout=120)
        self.assertEvidence(self.out(), "pass", "completed", rc=rc, stderr=se)
        self.assertNoSanitizerReport(se)
        with open(os.path.join(self.out(), "atspi.json")) as f:
            tree = json.load(f)
        many = [n for n in tree["nodes"] if n["name"] == "Many Cells"]
        self.assertEqual([n["role"] for n in many], ["table"], many)
        self.assertEqual((tree["walk"]["truncated"], tree["walk"]["cut_by"]), (True, "children"))
        with open(rec) as f:
            self.assertEqual(f.read().split(), ["pressed"])

    def test_a_find_counts_a_table_of_many_cells(self):
        """The same in a find that reads the whole tree (no such control, no
        probe): the table's count, not its cells."""
        rec = os.path.join(self.tmp, "rec")
        sc = self.scenario("""\
launch: %s --many-children 20000 --record %s
window: KSR Test App
settle_s: 0.5
atspi: false
steps:
  - click_element: "No such button"
    timeout_s: 2
""" % (ksr.TESTAPP, rec))
        rc, _so, se, _t = self.run_rt(["run", "--xvfb", sc], out=self.out(), timeout=120)
        self.assertEvidence(self.out(), "app-failed", "step-failed", rc=rc, stderr=se)
        self.assertNoSanitizerReport(se)
        self.assertFalse(os.path.exists(rec), "a cell was built")  # nothing recorded

    def test_state_check_that_does_not_hold(self):
        sc = self.scenario("""\
launch: %s
window: KSR Test App
settle_s: 0.2
steps:
  - click_element: "Press me"
    expect_state: "Enable feature checked"
    timeout_s: 1
""" % ksr.TESTAPP)
        rc, _so, se, _t = self.run_rt(["run", "--xvfb", sc], out=self.out())
        report = self.assertEvidence(self.out(), "app-failed", "check-failed", rc=rc, stderr=se)
        self.assertIn("not checked", report["reason"])

    def test_hung_app_fails_within_timeout(self):
        sc = self.scenario("""\
launch: %s --hang-after 1500
window: KSR Test App
settle_s: 0.2
atspi: false
steps:
  - sleep: 2
  - click_element: "Press me"
    timeout_s: 4
""" % ksr.TESTAPP)
        rc, _so, se, elapsed = self.run_rt(["run", "--xvfb", sc], out=self.out(), timeout=90)
        report = self.assertEvidence(self.out(), "app-failed", "step-failed", rc=rc, stderr=se)
        self.assertRegex(report["reason"], r"(?i)no answer|did not answer")
        self.assertEqual(steps_of(report)[1]["status"], "failed")
        self.assertNoSanitizerReport(se)


class AtspiNoBus(ksr.KsrTestCase):
    def test_no_bus(self):
        """No session bus and AT_SPI_BUS_ADDRESS pointing nowhere: the probe is
        recorded unavailable (not a failure); click_element is a test-error
        naming what to start."""
        nowhere = "unix:path=%s/no-bus" % self.tmp
        display = self.start_xvfb()
        env = self.env(DISPLAY=display, AT_SPI_BUS_ADDRESS=nowhere,
                       DBUS_SESSION_BUS_ADDRESS=nowhere, NO_AT_BRIDGE=1)
        sc = self.scenario("""\
launch: %s
window: KSR Test App
settle_s: 0.2
steps:
  - click_element: "Press me"
""" % ksr.TESTAPP)
        rc, _so, se, _t = self.run_rt(["run", sc], env=env, out=self.out())
        report = self.assertEvidence(self.out(), "test-error", "backend-unavailable", rc=rc,
                                     stderr=se)
        self.assertIn("at-spi-bus-launcher", report["reason"])
        probe = ksr.stage(report, "accessibility-probe")
        self.assertEqual(probe["status"], "skipped")
        self.assertIn("unavailable", probe["reason"])
        self.assertEqual(report["accessibility"]["status"], "unavailable")
        self.assertNoSanitizerReport(se)


class AtspiGtk4(ksr.KsrTestCase):
    needs_testapp = False

    def setUp(self):
        super().setUp()
        if not shutil.which("gnome-calculator"):
            self.fail("gnome-calculator is not installed (scripts/setup.sh deps)")

    def test_calculator(self):
        # GTK4 names its digit buttons "1 1" (label text twice); the answer
        # shows up as a label in the history view.
        sc = self.scenario("""\
launch: gnome-calculator
window: Calculator
settle_s: 1
steps:
  - click_element: "1 1"
  - click_element: "2 2"
  - click_element: "× ×"
  - click_element: "3 3"
    role: button
  - click_element: "= ="
    expect_state: "= = sensitive"
    checks:
      - element: "36"
""")
        rc, _so, se, _t = self.run_rt(["run", "--xvfb", sc], out=self.out(), timeout=120)
        report = self.assertEvidence(self.out(), "pass", "completed", rc=rc, stderr=se)
        self.assertNoSanitizerReport(se)
        for s in steps_of(report):
            self.assertEqual((s["backend"], s["rung"]), ("atspi", "element"), s)
        self.assertEqual(steps_of(report)[-1]["checks"][0]["status"], "held")
        with open(os.path.join(self.out(), "atspi.json")) as f:
            tree = json.load(f)
        # "36" was not there before the clicks: the check saw the app's answer
        self.assertNotIn("36", [n["name"] for n in tree["nodes"]])
        self.assertEqual(report["accessibility"]["app"]["toolkit"], "GTK")
        # GTK4 extents are window-relative: with the origin added they lie in the window
        win = report["app"]["window"]
        one = [n for n in tree["nodes"] if n["name"] == "1 1"][0]["extents"]
        self.assertTrue(win["x"] <= one["x"] < win["x"] + win["w"], (one, win))
        self.assertTrue(win["y"] <= one["y"] < win["y"] + win["h"], (one, win))


class AtspiQt(ksr.KsrTestCase):
    """featherpad (Qt 5). Qt's bridge segfaulted on Properties.GetAll (it reads
    a second argument of every Properties call); the walk asks Qt with
    Properties.Get. A crash would end this run app-failed."""
    needs_testapp = False

    def setUp(self):
        super().setUp()
        if not shutil.which("featherpad"):
            self.fail("featherpad is not installed (scripts/setup.sh deps)")

    def test_featherpad(self):
        # "File" offers only ShowMenu (not a click action): its extents are
        # clicked through XTest and the menu opens ("Save As" becomes showing).
        # "Line Numbers" (unchecked at start) has Press: the action checks it;
        # its menu is closed again (Escape), so the step says hidden_ok.
        sc = self.scenario("""\
launch: featherpad
process: ^featherpad$
window: Untitled|FeatherPad
settle_s: 1
steps:
  - click_element: "File"
    role: menu item
    checks:
      - state: {name: Save As, role: menu item, state: showing}
  - key: Escape
  - click_element: "Line Numbers"
    role: menu item
    hidden_ok: true
    expect_state: "Line Numbers checked"
""")
        rc, _so, se, _t = self.run_rt(["run", "--xvfb", sc], out=self.out(), timeout=120,
                                      env=self.env(QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1))
        report = self.assertEvidence(self.out(), "pass", "completed", rc=rc, stderr=se)
        self.assertNoSanitizerReport(se)
        acc = report["accessibility"]
        self.assertEqual(acc["status"], "ok")
        self.assertEqual(acc["app"]["toolkit"], "Qt")
        s1, _s2, s3 = steps_of(report)
        self.assertEqual((s1["backend"], s1["rung"]), ("xtest", "element"), s1)
        self.assertIn("ready", s1["details"], s1)
        self.assertEqual(s1["element"]["path"], "/frame[Untitled]/menu bar/menu item[File]")
        self.assertEqual(s1["checks"][0]["status"], "held")
        self.assertEqual((s3["backend"], s3["rung"]), ("atspi", "element"), s3)
        self.assertTrue(s3["element"]["path"].endswith("/menu item[Line Numbers]"), s3)
        self.assertEqual(s3["checks"][0]["status"], "held")
        # the probe walked the whole app before the steps: menus closed,
        # "Line Numbers" unchecked (so the checks above saw the steps' effects)
        with open(os.path.join(self.out(), "atspi.json")) as f:
            tree = json.load(f)
        self.assertFalse(tree["walk"]["truncated"])
        self.assertEqual(tree["walk"]["unanswered"], 0)
        by_name = {(n["role"], n["name"]): n for n in tree["nodes"]}
        self.assertNotIn("showing", by_name[("menu item", "Save As")]["states"])
        self.assertNotIn("checked", by_name[("menu item", "Line Numbers")]["states"])
        # a pid that died and came back would mean the app crashed mid-run
        self.assertEqual(s1["element"]["pid"], s3["element"]["pid"])

class HeldApp:
    """An app held open in the runtime's own session, for a helper to walk."""

    def hold(self, launch, window, process, env=None):
        """A run that holds the app open in the runtime's own session; the
        app's PID and its session's environment."""
        sc = self.scenario("launch: %s\nprocess: ^%s$\nwindow: %s\nsettle_s: 1\n"
                           "atspi: false\nsteps:\n  - sleep: 300\n" % (launch, process, window))
        out = self.out(launch)
        rt = self.start_rt(["run", "--xvfb", sc], out=out, env=env)
        ksr.wait_for_trace_event(out, ksr.in_stage("steps"), 90, proc=rt)
        app = ksr.wait_for_trace_event(
            out, lambda e: e.get("event") == "app" and e.get("pid"), 10, proc=rt)
        with open("/proc/%d/environ" % app["pid"], "rb") as f:
            pairs = [kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv]
        keep = ("DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR")
        env = dict(self.env())
        env.update({k.decode(): v.decode() for k, v in pairs if k.decode() in keep})
        return app["pid"], env


class FindModeAgreesWithFullWalk(HeldApp, ksr.KsrTestCase):
    """The find-mode walk (click_element, state checks) picks, for every name
    in a full walk, the node the full tree's finder picks: on GTK 4 mostly
    answered from the app's Cache.GetItems (the match and its ancestors only),
    on Qt 5 (no cache) and GTK 3 with tree views (a cache that may leave rows
    out) by walking. The oracle is a second full walk and ksr_atspi_tree_find,
    in tests/helpers/ksr-findcheck.c."""
    needs_testapp = False

    def check(self, pid, env):
        r = subprocess.run([os.environ["KSR_FINDCHECK"], str(pid)], env=env,
                           capture_output=True, text=True, timeout=240)
        self.assertEqual(r.returncode, 0, r.stdout[-3000:] + r.stderr[-2000:])
        last = r.stdout.strip().splitlines()[-1]
        tried, bad, cached = [int(w) for w in last.replace(":", " ").replace(",", " ").split()
                              if w.isdigit()]
        return tried, bad, cached

    def test_gtk4_calculator_from_the_cache(self):
        if not shutil.which("gnome-calculator"):
            self.fail("gnome-calculator is not installed (scripts/setup.sh deps)")
        tried, bad, cached = self.check(*self.hold("gnome-calculator", "Calculator",
                                                   "gnome-calculator"))
        self.assertEqual(bad, 0)
        self.assertGreater(tried, 50)  # its buttons, labels, panes
        # Two "GtkScrollbar" nodes are both showing: tree order decides, and the
        # cache does not give it, so those (and the hidden ones) are walked.
        self.assertGreater(cached, tried // 2)
        self.assertLess(cached, tried)

    def test_qt5_featherpad_walked(self):
        if not shutil.which("featherpad"):
            self.fail("featherpad is not installed (scripts/setup.sh deps)")
        pid, env = self.hold("featherpad", "Untitled|FeatherPad", "featherpad",
                             env=self.env(QT_LINUX_ACCESSIBILITY_ALWAYS_ON="1"))
        tried, bad, cached = self.check(pid, env)
        self.assertEqual((bad, cached), (0, 0))  # Qt 5 serves no cache
        self.assertGreater(tried, 50)  # its menus' items, toolbar buttons

    def test_gtk3_widget_factory(self):
        if not shutil.which("gtk3-widget-factory"):
            self.fail("gtk3-widget-factory is not installed (scripts/setup.sh deps)")
        tried, bad, _cached = self.check(*self.hold(
            "gtk3-widget-factory", "^gtk3-widget-factory$", "gtk3-widget-factory"))
        self.assertEqual(bad, 0)
        self.assertGreater(tried, 30)


class WalkShapeAgreesWithGetChildren(HeldApp, ksr.KsrTestCase):
    """A full walk takes a node's children from the app's cache where the
    cache names all of them (its child count met, one item at each index),
    else asks GetChildren; either way its nodes, their parents and their
    order must be those of a walk by GetChildren alone, breadth first
    (tests/helpers/atspi_children.py, Gio), and a node bound must keep the
    same first nodes. A fresh GTK 4 app has built few
    accessible objects, so its first walk mixes both; GTK 3's cache gives
    menus no count and their items no index; Qt 5 has no cache."""
    needs_testapp = False

    def ours(self, pid, env, *bound):
        """Our walk's lines (bound: MAX_NODES), and its summary's figures."""
        r = subprocess.run([os.environ["KSR_FINDCHECK"], "--tree", str(pid)] + list(bound),
                           env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stdout[-2000:] + r.stderr[-2000:])
        lines = r.stdout.strip().splitlines()
        return lines[:-1], [int(w) for w in lines[-1].replace(",", " ").split() if w.isdigit()]

    def oracle(self, pid, env):
        o = subprocess.run(["/usr/bin/python3", os.path.join(
            os.environ["KSR_SOURCE_DIR"], "tests", "helpers", "atspi_children.py"), str(pid)],
            env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(o.returncode, 0, o.stderr[-2000:])
        return o.stdout.strip().splitlines()

    def agree(self, pid, env):
        """Two rounds, then a walk bounded to 40 nodes; the cache's share of
        the second round (a warm app)."""
        first, _ = self.ours(pid, env)
        oracle1 = self.oracle(pid, env)
        second, (_calls, from_cache) = self.ours(pid, env)
        oracle2 = self.oracle(pid, env)
        self.assertEqual(oracle1, oracle2, "the app's tree changed between walks")
        self.assertGreater(len(oracle1), 50)
        self.assertEqual(first, oracle1)
        self.assertEqual(second, oracle2)
        # a node bound keeps the nodes nearest the root, as a walk by
        # GetChildren does (a11y_tree's max_nodes): the first 40 in its order
        bounded, _ = self.ours(pid, env, "40")
        self.assertEqual(bounded, oracle2[:40])
        return from_cache, len(second)

    def test_gtk4_calculator(self):
        if not shutil.which("gnome-calculator"):
            self.fail("gnome-calculator is not installed (scripts/setup.sh deps)")
        from_cache, nodes = self.agree(*self.hold("gnome-calculator", "Calculator",
                                                  "gnome-calculator"))
        self.assertGreater(from_cache, nodes // 2)

    def test_gtk3_mousepad(self):
        if not shutil.which("mousepad"):
            self.fail("mousepad is not installed (scripts/setup.sh deps)")
        from_cache, nodes = self.agree(*self.hold("mousepad", "Mousepad", "mousepad"))
        self.assertGreater(from_cache, 0)
        self.assertLess(from_cache, nodes)  # not below its menus

    def test_qt5_featherpad(self):
        if not shutil.which("featherpad"):
            self.fail("featherpad is not installed (scripts/setup.sh deps)")
        from_cache, _nodes = self.agree(*self.hold(
            "featherpad", "Untitled|FeatherPad", "featherpad",
            env=self.env(QT_LINUX_ACCESSIBILITY_ALWAYS_ON="1")))
        self.assertEqual(from_cache, 0)  # Qt 5 serves no cache: all by GetChildren


if __name__ == "__main__":
    unittest.main()
