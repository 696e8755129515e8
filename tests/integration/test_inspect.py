"""`inspect` against real apps: the runtime's own --xvfb session (Xvfb, D-Bus,
AT-SPI bus, openbox), the GTK3 test app and gnome-calculator (GTK4) launched
with --launch. Checks that the listing names the test app's known controls
with the step that reaches them, the window line, and fractions that lie in
0..1 and land on their control."""

import json
import os
import re
import shutil

import ksr

TITLE = "KSR Test App"


class InspectTestApp(ksr.KsrTestCase):
    def inspect(self, *extra, timeout=90):
        # --timeout 75: a liveness bound; a GTK app can stall ~25 s at start
        # when the fresh AT-SPI bus is slow to answer under a loaded parallel run.
        args = ["inspect", "--xvfb", "--launch", ksr.TESTAPP, "--wait-window", TITLE,
                "--timeout", "75"] + list(extra)
        rc, so, se, _t = self.run_rt(args, timeout=timeout)
        self.assertNoSanitizerReport(se)
        self.assertEqual(rc, 0, "stderr:\n%s" % se[-3000:])
        return so

    def test_text(self):
        so = self.inspect()
        self.assertIn("window: ^KSR Test App$", so)
        for line in ('click_element: "Press me"', 'click_element: "Enable feature"',
                     'click_element: "Text field"'):
            self.assertIn(line, so)
        # each control row is followed by its step
        self.assertRegex(so, r'push button "Press me".*\n\s+- click_element: "Press me"')
        self.assertRegex(so, r'check box "Enable feature".*\n\s+- click_element: "Enable feature"')
        # the launched app and the private session were stopped
        self.assertAppGone(["ksr-testapp", "Xvfb"])

    def test_json(self):
        doc = json.loads(self.inspect("--json"))
        self.assertTrue(doc["private_session"])
        wins = [w for w in doc["windows"] if w["title"] == TITLE]
        self.assertEqual(len(wins), 1, doc["windows"])
        win = wins[0]
        self.assertEqual(win["line"], "window: ^KSR Test App$")
        self.assertEqual(win["type"], "normal")
        self.assertGreater(win["pid"], 0)
        self.assertEqual(doc["launched"]["window_pid"], win["pid"])
        self.assertTrue(win["geometry"]["w"] > 0 and win["geometry"]["h"] > 0)
        acc = doc["accessibility"]
        self.assertEqual(acc["status"], "ok", acc)
        apps = [a for a in acc["apps"] if a["pid"] == win["pid"]]
        self.assertEqual(len(apps), 1, acc)
        app = apps[0]
        self.assertEqual((app["status"], app["found_by"]), ("ok", "pid"))
        self.assertFalse(app["walk"]["truncated"])
        by_name = {c["name"]: c for c in app["controls"]}
        press = by_name["Press me"]
        self.assertEqual(press["role"], "push button")
        self.assertEqual(press["line"], 'click_element: "Press me"')
        self.assertEqual((press["reach"]["rung"], press["reach"]["backend"]), (2, "atspi"))
        self.assertEqual(press["reach"]["window"], win["id"])
        self.assertIn("click", [a.lower() for a in press["actions"]])
        self.assertEqual(by_name["Enable feature"]["role"], "check box")
        self.assertEqual(by_name["Enable feature"]["line"], 'click_element: "Enable feature"')
        self.assertEqual(by_name["Text field"]["line"], 'click_element: "Text field"')
        self.assertIn("editable", by_name["Text field"]["states"])
        # the label has no action: reached through its position (an XTest click)
        self.assertEqual(by_name["Pressed 0"]["reach"]["backend"], "xtest")
        g = win["geometry"]
        for c in app["controls"]:
            e = c["extents"]
            if e and "showing" in c["states"]:
                cx, cy = e["x"] + e["w"] // 2, e["y"] + e["h"] // 2
                self.assertTrue(g["x"] <= cx < g["x"] + g["w"] and g["y"] <= cy < g["y"] + g["h"],
                                (c, g))
        self.assertEqual(doc["page"]["status"], "not-requested")

    def test_window_filter_and_usage(self):
        doc = json.loads(self.inspect("--json", "--window", "^No such window$"))
        self.assertEqual(doc["windows"], [])
        self.assertEqual(doc["accessibility"]["apps"], [])
        rc, _so, se, _t = self.run_rt(["inspect", "--wait-window", "x"])
        self.assertEqual(rc, 2)
        self.assertIn("--wait-window needs --launch", se)
        rc, so, _se, _t = self.run_rt(["inspect", "--help"])
        self.assertEqual(rc, 0)
        self.assertIn("click_element", so)
        rc, _so, se, _t = self.run_rt(["inspect", "--xvfb", "--window", "("])
        self.assertEqual(rc, 2)
        self.assertIn("--window", se)

    def test_no_display(self):
        rc, _so, se, _t = self.run_rt(["inspect", "--timeout", "2"])
        self.assertEqual(rc, 2)
        self.assertRegex(se, r"(?i)display")

    def test_window_that_never_comes(self):
        rc, _so, se, elapsed = self.run_rt(["inspect", "--xvfb", "--timeout", "4", "--launch",
                                            "sleep 30", "--wait-window", "never"], timeout=60)
        self.assertEqual(rc, 2)
        self.assertIn("no window matching never appeared", se)
        self.assertAppGone(["sleep", "Xvfb"])


class InspectGtk4(ksr.KsrTestCase):
    needs_testapp = False

    def test_calculator_fractions(self):
        if not shutil.which("gnome-calculator"):
            self.fail("gnome-calculator is not installed (scripts/setup.sh deps)")
        rc, so, se, _t = self.run_rt(["inspect", "--xvfb", "--json", "--launch", "gnome-calculator",
                                      "--wait-window", "Calculator"], timeout=120)
        self.assertNoSanitizerReport(se)
        self.assertEqual(rc, 0, se[-3000:])
        doc = json.loads(so)
        wins = {w["id"]: w for w in doc["windows"]}
        app = [a for a in doc["accessibility"]["apps"] if a.get("name") == "gnome-calculator"][0]
        lines = [c["line"] for c in app["controls"]]
        self.assertIn('click_element: "= ="', lines)
        # Unnamed controls: a locator that finds them alone (issue #32), else a fraction.
        unnamed = [c for c in app["controls"] if c["name"] == "" and c["reach"]]
        self.assertTrue(unnamed, "the calculator has unnamed controls a step reaches")
        for c in unnamed:
            if c["reach"]["kind"] == "element":
                self.assertTrue(c["line"].startswith("click_element: " + c["reach"]["locator"]), c)
        fractions = [c for c in app["controls"] if c["reach"] and c["reach"]["kind"] == "literal"]
        for c in fractions:
            fx, fy = c["reach"]["fraction"]["x"], c["reach"]["fraction"]["y"]
            self.assertTrue(0 <= fx <= 1 and 0 <= fy <= 1, c)
            self.assertRegex(c["line"], r"^click: [01]\.\d{2,4} [01]\.\d{2,4}$")
            # the runtime's own rounding (exec_input.c) puts the click on the control
            g, e = wins[c["reach"]["window"]]["geometry"], c["extents"]
            px, py = g["x"] + round(fx * g["w"]), g["y"] + round(fy * g["h"])
            self.assertTrue(e["x"] <= px < e["x"] + e["w"] and e["y"] <= py < e["y"] + e["h"],
                            (c, g, px, py))
        # every element line is unique up to its role: it reaches one control
        seen = set()
        for c in app["controls"]:
            if c["reach"] and c["reach"]["kind"] == "element":
                key = tuple(c["reach"]["step"])
                self.assertNotIn(key, seen, c)
                seen.add(key)



class InspectAfter(ksr.KsrTestCase):
    """inspect --after (issue #17): the listing of the state a scenario's steps
    leave the app in (mousepad's Save As dialog open), with the key: line of a
    menu item's shortcut, on a private display; --line stops before later steps."""
    needs_testapp = False

    SCENARIO = """\
name: after
launch: exec mousepad
process: ^mousepad$
window: Mousepad$
settle_s: 1
steps:
  - type: "hello"
  - key: ctrl+s
    checks:
      - window: ^Save As$
        timeout_s: 15
  - key: Escape
    checks:
      - no_window: ^Save As$
"""

    def setUp(self):
        super().setUp()
        if not shutil.which("mousepad"):
            self.fail("mousepad is not installed (scripts/setup.sh deps)")

    def after(self, *extra):
        path = self.scenario(self.SCENARIO, "after.yaml")
        rc, so, se, _t = self.run_rt(["inspect", "--xvfb", "--after", path] + list(extra),
                                     timeout=180)
        self.assertNoSanitizerReport(se)
        self.assertEqual(rc, 0, "stderr:\n%s" % se[-3000:])
        self.assertRegex(se, r"ran .*after\.yaml.*: pass \(exit 0\), evidence in /tmp/ksr-inspect-")
        return path, so, se

    def test_dialog_open_after_line(self):
        path, so, se = self.after("--line", str(ksr.line_of(path_of(self), "key: ctrl+s")),
                                  "--json")
        doc = json.loads(so)
        self.assertEqual(doc["after_verdict"], "pass")
        titles = [w["title"] for w in doc["windows"]]
        self.assertIn("Save As", titles)  # Escape (after the line) was not pressed
        app = [a for a in doc["accessibility"]["apps"] if a.get("name") == "mousepad"][0]
        by = {(c["role"], c["name"]): c for c in app["controls"]}
        cancel = by[("push button", "Cancel")]
        self.assertEqual(cancel["reach"]["step"][0], 'click_element: "Cancel"')
        self.assertFalse(cancel["hidden"])
        # a menu item with trailing spaces in its AT-SPI name is listed as people
        # read it, with its shortcut's key: line; closed menu: marked hidden
        save = by[("menu item", "Save")]
        self.assertEqual(save["key"], "key: ctrl+s")
        self.assertIn("<Primary>s", save["keybinding"])
        self.assertTrue(save["hidden"])
        self.assertEqual(save["reach"]["step"][0], 'click_element: "Save"')
        self.assertAppGone(["mousepad"])

    def test_text_listing_puts_the_key_line_first(self):
        _path, so, _se = self.after()
        # all steps ran: the dialog is closed again
        self.assertNotIn('"Save As"  class', so)
        self.assertRegex(so, r'menu item "Save" .*\n\s+- key: ctrl\+s .*\n\s+- click_element: "Save"')

    def test_out_dir_holds_the_run_and_the_listing(self):
        # --out DIR (issue #32): the run's evidence and the listing go there, not /tmp
        path = path_of(self)
        out = self.out("after-out")
        rc, so, se, _t = self.run_rt(["inspect", "--xvfb", "--json", "--after", path,
                                      "--line", str(ksr.line_of(path, "key: ctrl+s")),
                                      "--out", out], timeout=180)
        self.assertNoSanitizerReport(se)
        self.assertEqual(rc, 0, "stderr:\n%s" % se[-3000:])
        self.assertIn("evidence in %s" % out, se)
        doc = json.loads(so)
        self.assertEqual(doc["after_out"], out)
        self.assertIsNotNone(doc["settle"])  # the steps' effects drawn before the listing
        self.assertTrue(os.path.isfile(os.path.join(out, "report.json")))
        with open(os.path.join(out, "inspect.json"), encoding="utf-8") as f:
            self.assertIn("Save As", [w["title"] for w in json.load(f)["windows"]])

    def test_usage_and_invalid_scenario(self):
        rc, _so, se, _t = self.run_rt(["inspect", "--line", "3"])
        self.assertEqual(rc, 2)
        self.assertIn("--line needs --after", se)
        bad = self.scenario("launch: x\nwindow: x\nsteps:\n  - key: Retrun\n", "bad.yaml")
        rc, so, se, _t = self.run_rt(["inspect", "--xvfb", "--after", bad], timeout=120)
        self.assertEqual(rc, 2, se)
        self.assertEqual(so, "")
        self.assertIn("did you mean 'Return'", se)


def path_of(tc):
    return tc.scenario(InspectAfter.SCENARIO, "after.yaml")


MNEMONIC = os.environ.get("KSR_MNEMONIC", "")
MNEMONIC_TITLE = "KSR Mnemonic"


class InspectKeys(ksr.KsrTestCase):
    """inspect that does not mislead (issue #32), on tests/app/ksr-mnemonic.c:
    a GTK 3 window with a menu bar (_File, _Help) above fields labelled _Host:
    and _Name:, and a button added 2 s after start. A key: line is offered only
    for a shortcut the menu bar does not also claim (alt+h would open Help),
    and the offered one, replayed in a run, reaches its control; the listing
    waits for the app to settle (the late button is listed); --out keeps the
    evidence."""
    needs_testapp = False

    def setUp(self):
        super().setUp()
        if not MNEMONIC or not os.access(MNEMONIC, os.X_OK):
            self.fail("KSR_MNEMONIC is not the built ksr-mnemonic: %r" % MNEMONIC)

    def inspect_json(self, *extra, launch=None, out=None):
        keep = ["--out", out] if out else []
        rc, so, se, _t = self.run_rt(["inspect", "--xvfb", "--json", "--timeout", "75"] + keep +
                                     ["--launch", launch or MNEMONIC, "--wait-window",
                                      MNEMONIC_TITLE] + list(extra), timeout=120)
        self.assertNoSanitizerReport(se)
        self.assertEqual(rc, 0, "stderr:\n%s" % se[-3000:])
        doc = json.loads(so)
        app = [a for a in doc["accessibility"]["apps"] if a.get("name") == "ksr-mnemonic"][0]
        return doc, app, out

    def test_keys_menus_claim_are_withheld_and_settled(self):
        doc, app, _out = self.inspect_json()
        controls = app["controls"]
        menus = [c for c in controls if c["role"] == "menu"]
        claimed = {"alt+" + c["name"][0].lower() for c in menus}
        self.assertEqual(claimed, {"alt+f", "alt+h"}, menus)
        keys = [c["key"] for c in controls if "key" in c]
        for k in keys:
            self.assertNotIn(k[len("key: "):], claimed, "a key line a menu also claims: %r" % k)
        host = [c for c in controls if c["line"] == 'click_element: {label: "Host:"}'][0]
        name = [c for c in controls if c["line"] == 'click_element: {label: "Name:"}'][0]
        self.assertNotIn("key", host)
        self.assertIn('opens the menu "Help"', host["key_withheld"])
        self.assertEqual(name["key"], "key: alt+n")
        # settled first: the button the app adds 2 s after start is listed
        self.assertIn("Late button", [c["name"] for c in controls])
        self.assertTrue(doc["settle"]["quiet"], doc["settle"])
        self.assertEqual(doc["settle"]["settle_s"], 5)
        self.assertAppGone(["ksr-mnemonic"])

    def test_out_dir_keeps_the_evidence(self):
        out = self.out("inspect-out")
        doc, _app, _out = self.inspect_json("--settle-s", "0", out=out)
        # --out DIR holds the evidence: the listing and the app's output
        with open(os.path.join(out, "inspect.json"), encoding="utf-8") as f:
            self.assertEqual(json.load(f)["windows"], doc["windows"])
        self.assertTrue(os.path.isfile(os.path.join(out, "launch.log")))
        self.assertAppGone(["ksr-mnemonic"])

    def test_settle_s_zero_lists_before_the_late_control(self):
        # --settle-s changes the wait: 0 with a late control 20 s away lists without it
        doc, app, _out = self.inspect_json("--settle-s", "0", launch=MNEMONIC + " 20000")
        self.assertEqual(doc["settle"]["settle_s"], 0)
        self.assertNotIn("Late button", [c["name"] for c in app["controls"]])

    def test_suggested_keys_replayed_reach_their_controls(self):
        # The listing alone (no --out, no --settle-s): what any version prints.
        rc, so, se, _t = self.run_rt(["inspect", "--xvfb", "--json", "--timeout", "75",
                                      "--launch", MNEMONIC, "--wait-window", MNEMONIC_TITLE],
                                     timeout=120)
        self.assertEqual(rc, 0, "stderr:\n%s" % se[-3000:])
        app = [a for a in json.loads(so)["accessibility"]["apps"]
               if a.get("name") == "ksr-mnemonic"][0]
        fields = [c for c in app["controls"] if "key" in c and c["role"] == "text"
                  and c["reach"] and c["reach"].get("locator", "").startswith("{label: ")]
        self.assertTrue(fields, app["controls"])
        # Every suggested key line, pressed with the focus elsewhere (on the late
        # button), must put the focus in its field: what is typed next lands there.
        # The presses only take the focus away from the fields (the button does
        # nothing; the focus may be there already): no effect is expected.
        steps = ['  - click_element: "Late button"', "    expect_effect: false"]
        for k, c in enumerate(fields):
            check = c["reach"]["locator"][:-1] + ", equals: typed%d}" % k
            steps += ["  - %s" % c["key"], "  - type: typed%d" % k,
                      "    checks:", "      - text: %s" % check,
                      "        timeout_s: 3",
                      '  - click_element: "Late button"', "    expect_effect: false"]
        text = """\
name: replay
launch: exec %s
process: ^ksr-mnemonic$
window: ^KSR Mnemonic$
settle_s: 3
steps:
""" % MNEMONIC + "\n".join(steps) + "\n"
        path = self.scenario(text, "replay.yaml")
        out = self.out("run")
        rc, _so, se, _t = self.run_rt(["run", "--xvfb", path, "--out", out], timeout=120)
        self.assertNoSanitizerReport(se)
        self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)


class InspectFileZilla(ksr.KsrTestCase):
    """FileZilla (wxWidgets on GTK 3), as the issue #32 newcomer saw it: once
    settled its Host field publishes <Alt>h, which the Help menu claims (alt+h
    opens Help), so no key line is offered for it; and every showing control
    with a position is reached (before, the window was listed at its size
    before the window manager enlarged it and controls outside it had "no
    position in a window")."""
    needs_testapp = False

    def test_host_key_withheld_and_every_placed_control_reached(self):
        if not shutil.which("filezilla"):
            self.fail("filezilla is not installed (scripts/setup.sh test)")
        home = os.path.join(self.tmp, "home")
        os.makedirs(home, exist_ok=True)
        env = self.env(HOME=home, XDG_CONFIG_HOME=os.path.join(home, ".config"))
        rc, so, se, _t = self.run_rt(["inspect", "--xvfb", "--json", "--timeout", "90",
                                      "--launch", "filezilla", "--wait-window",
                                      "^FileZilla$"], env=env, timeout=240)
        self.assertNoSanitizerReport(se)
        self.assertEqual(rc, 0, se[-3000:])
        doc = json.loads(so)
        app = [a for a in doc["accessibility"]["apps"] if a.get("name") == "filezilla"][0]
        menus = {c["name"][0].lower() for c in app["controls"] if c["role"] == "menu"
                 and c.get("keybinding", "").startswith("<Alt>")}
        self.assertIn("h", menus)
        for c in app["controls"]:
            if "key" in c and re.fullmatch(r"key: alt\+.", c["key"]):
                self.assertNotIn(c["key"][-1], menus, c)
        host = [c for c in app["controls"] if c["reach"] and
                c["reach"].get("locator") == '{label: "Host:"}'][0]
        self.assertNotIn("key", host)
        self.assertIn('"Help"', host["key_withheld"])
        lost = [(c["role"], c["name"], c["extents"]) for c in app["controls"]
                if c["reach"] is None and c["extents"] and "showing" in c["states"]]
        self.assertEqual(lost, [])


class InspectNotOnBus(ksr.KsrTestCase):
    """A GTK 2 app not on the bus (gpicview): the reason names the module to load."""
    needs_testapp = False

    def test_gtk2_hint(self):
        if not shutil.which("gpicview"):
            self.fail("gpicview is not installed (scripts/setup.sh deps)")
        rc, so, se, _t = self.run_rt(["inspect", "--xvfb", "--json", "--settle-s", "0",
                                      "--timeout", "30", "--launch", "exec gpicview"],
                                     timeout=90)
        self.assertNoSanitizerReport(se)
        self.assertEqual(rc, 0, se[-3000:])
        doc = json.loads(so)
        apps = [a for a in doc["accessibility"]["apps"] if a["status"] == "not-on-bus"]
        self.assertTrue(apps, doc["accessibility"])
        self.assertIn("GTK_MODULES=gail:atk-bridge", apps[0]["reason"])


if __name__ == "__main__":
    import unittest
    unittest.main()
