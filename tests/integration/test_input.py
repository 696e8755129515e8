"""Acting through X11 (issue #4): typing, key chords, declared-fraction clicks
(also after the window moved and resized), target: window on a dialog, step
screenshots with the click marker, and failing checks. Real Xvfb + openbox
(the runtime's --xvfb), the GTK3 test app and zenity; what arrived is read back
from the test app's --record file and zenity's stdout, never from the runtime."""

import math
import os
import re
import unittest

import ksr

# Fractions of the test app's 480x320 client area, read off a first-look
# screenshot: "Press me" spans y 24..58 px (full width less a 24 px border),
# the text field y 134..166 px.
TARGETS = """targets:
  press: [0.5, 0.13]
  field: [0.5, 0.47]
  empty: [0.5, 0.9]
"""
ASCII = "Hello World 123"
SHIFTED = "!@#$%^&*()_+{}|:<>?~"
UNICODE = "é ü € ß 日本"
# The Close button of the test app's message dialog, as a fraction of the dialog.
CLOSE = [0.5, 0.84]


def rec_lines(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().splitlines()
    except FileNotFoundError:
        return []


def step_rows(out):
    return [e for e in ksr.read_trace(out) if e.get("event") == "step.end"]


class InputTest(ksr.KsrTestCase):

    def env(self, **extra):
        extra.setdefault("KSR_TESTAPP", ksr.TESTAPP)
        return super().env(**extra)

    def app_scenario(self, steps, rec, app_args=""):
        return self.scenario(
            "name: input\n"
            "launch: ${KSR_TESTAPP} --record %s%s\n"
            "process: ^ksr-testapp$\n"
            "window: ^KSR Test App$\n"
            "settle_s: 0.5\n"
            "atspi: false\n" % (rec, app_args) + TARGETS + "steps:\n" + steps)

    def run_ok(self, path, verdict="pass", outcome="completed"):
        out = self.out()
        rc, _so, se, _el = self.run_rt(["run", "--xvfb", path], out=out, timeout=180)
        self.assertNoSanitizerReport(se)
        report = self.assertEvidence(out, verdict, outcome, rc=rc, stderr=se)
        return out, report, se

    def assert_shots(self, out, row, annotated):
        """The step row names NN-step.png (and NN-step-annotated.png), they are
        artifacts, and the marker is drawn at the row's pixel only in the copy."""
        nn = "%02d" % row["index"]
        self.assertEqual(row.get("screenshot"), nn + "-step.png", row)
        self.assertTrue(os.path.isfile(os.path.join(out, row["screenshot"])))
        if not annotated:
            self.assertNotIn("annotated", row)
            return
        self.assertEqual(row.get("annotated"), nn + "-step-annotated.png", row)
        _w, _h, marked = ksr.read_png_rgb(os.path.join(out, row["annotated"]))
        _w, _h, plain = ksr.read_png_rgb(os.path.join(out, row["screenshot"]))
        px, py = row["pixel"]["x"], row["pixel"]["y"]
        self.assertEqual(marked(px, py), (255, 0, 0), "marker centred on the pixel")
        self.assertNotEqual(plain(px, py), (255, 0, 0), "the plain screenshot is unmarked")

    def assert_pixel_from_geometry(self, row, fx, fy):
        """The pixel is the fraction of the geometry recorded in the same row."""
        w = row["window"]
        half_up = lambda v: math.floor(v + 0.5)  # C's lround, not Python's banker's round
        self.assertEqual(row["pixel"], {"x": half_up(w["x"] + fx * w["w"]),
                                        "y": half_up(w["y"] + fy * w["h"])}, row)

    def test_type_ascii_shifted_unicode_and_select_all(self):
        rec = os.path.join(self.tmp, "rec.txt")
        path = self.app_scenario(
            "  - click: field\n"
            "  - type: \"%s\"\n"
            "  - key: ctrl+a\n"
            "  - type: \"%s\"\n"
            "  - key: ctrl+a BackSpace\n"
            "  - type: \"%s\"\n" % (ASCII, SHIFTED.replace("\\", "\\\\"), UNICODE), rec)
        out, report, _se = self.run_ok(path)
        lines = rec_lines(rec)
        # ctrl+a then typing replaces: each value arrives whole, never appended
        for want in (ASCII, SHIFTED, UNICODE):
            self.assertIn("text:" + want, lines, "typed text arrived exactly")
        self.assertNotIn("text:" + ASCII + SHIFTED[0], lines, "ctrl+a selected the text")
        self.assertIn("text:", lines, "ctrl+a BackSpace emptied the field")
        self.assertEqual(lines[-1], "text:" + UNICODE)
        rows = step_rows(out)
        self.assertEqual([r["kind"] for r in rows], ["click", "type", "key", "type", "key", "type"])
        for r in rows:
            self.assertEqual(r["backend"], "xtest")
            self.assertEqual(r["focus"], "obtained", r)
            self.assertEqual(r["window_title"], "KSR Test App")
            self.assert_shots(out, r, annotated=r["kind"] == "click")
        self.assertEqual(rows[0]["rung"], "declared")
        self.assertEqual(rows[0]["target"], "field")
        self.assert_pixel_from_geometry(rows[0], 0.5, 0.47)
        self.assertEqual([s["screenshot"] for s in report["steps"]],
                         ["%02d-step.png" % i for i in range(1, 7)])
        self.assertEqual(report["steps"][0]["annotated"], "01-step-annotated.png")

    def test_declared_click_after_move_and_resize(self):
        rec = os.path.join(self.tmp, "rec.txt")
        path = self.app_scenario(
            "  - click: press\n"
            "  - shell: >-\n"
            "      xdotool search --sync --name '^KSR Test App$'\n"
            "      windowmove --sync 700 380 windowsize --sync 560 330\n"
            "  - click: press\n"
            # a right click on a button and clicks on empty space change
            # nothing in the app: said, so no no-effect concern (docs/scenario.md)
            "  - right_click: press\n"
            "    expect_effect: false\n"
            "  - double_click: press\n"
            "  - scroll: down 3\n"
            "    target: field\n"
            "  - click: center\n"
            "    expect_effect: false\n"
            "  - click: \"0.25 0.9\"\n"
            "    expect_effect: false\n", rec)
        out, _report, _se = self.run_ok(path)
        rows = {r["index"]: r for r in step_rows(out)}
        first, moved = rows[1]["window"], rows[3]["window"]
        self.assertEqual((first["w"], first["h"]), (480, 320), "the app's default size")
        self.assertEqual((moved["w"], moved["h"]), (560, 330), "geometry read at click time")
        self.assertNotEqual((first["x"], first["y"]), (moved["x"], moved["y"]), "moved")
        # the old pixel lies outside the moved window: only the new geometry hits
        p1 = rows[1]["pixel"]
        self.assertFalse(moved["x"] <= p1["x"] < moved["x"] + moved["w"] and
                         moved["y"] <= p1["y"] < moved["y"] + moved["h"])
        for i in (1, 3, 4, 5):
            self.assert_pixel_from_geometry(rows[i], 0.5, 0.13)
            self.assertEqual(rows[i]["rung"], "declared")
            self.assert_shots(out, rows[i], annotated=True)
        self.assert_pixel_from_geometry(rows[6], 0.5, 0.47)
        self.assertEqual(rows[7]["rung"], "center")
        self.assert_pixel_from_geometry(rows[7], 0.5, 0.5)
        self.assertEqual(rows[8]["rung"], "literal")
        self.assert_pixel_from_geometry(rows[8], 0.25, 0.9)
        # click + click after the move + double click = 4 presses; the right
        # click, the scroll and the clicks on the field and empty space press nothing
        self.assertEqual(rec_lines(rec).count("pressed"), 4, rec_lines(rec))

    def test_pointer_effects_arrive_as_the_app_recorded_them(self):
        """Right click, double click, wheel clicks each way and a plain click,
        proven by what the app received (button numbers, the double-click
        event, one wheel event per click, where each release happened), not
        by the steps' own status."""
        rec = os.path.join(self.tmp, "rec.txt")
        path = self.app_scenario(
            "  - right_click: press\n"
            "  - double_click: press\n"
            "  - scroll: down 3\n"
            "    target: field\n"
            "  - scroll: up 2\n"
            "    target: field\n"
            "  - click: empty\n"
            "    expect_effect: false\n", rec, " --record-pointer")
        out, _report, _se = self.run_ok(path)
        px = {r["index"]: "%d,%d" % (r["pixel"]["x"], r["pixel"]["y"]) for r in step_rows(out)}
        self.assertEqual(rec_lines(rec), [
            "button:3", "release:3:" + px[1],                       # right click: button 3
            "button:1", "release:1:" + px[2], "pressed",            # double click: two
            "button:1", "double:1", "release:1:" + px[2], "pressed",  # presses, one double
            "scroll:down", "scroll:down", "scroll:down",            # three wheel clicks down
            "scroll:up", "scroll:up",                               # two up
            "button:1", "release:1:" + px[5],                       # the click on empty space
        ])

    def test_drag_path_arrives_as_the_app_recorded_it(self):
        """drag: button 1 pressed at from:, motion with the button held, the
        release at to:, proven by what the app received (its --record-pointer
        lines, in root pixels), at the fractions of the app's 480x320 window."""
        rec = os.path.join(self.tmp, "rec.txt")
        path = self.app_scenario(
            "  - drag: {from: \"0.1 0.9\", to: empty}\n"
            "  - drag: {from: field, to: [0.9, 0.3]}\n", rec, " --record-pointer")
        out, _report, _se = self.run_ok(path)
        rows = step_rows(out)
        self.assertEqual([r["kind"] for r in rows], ["drag", "drag"])
        half_up = lambda v: math.floor(v + 0.5)
        want = []
        for r, (f0, f1) in zip(rows, [((0.1, 0.9), (0.5, 0.9)), ((0.5, 0.47), (0.9, 0.3))]):
            w = r["window"]
            self.assertEqual((w["w"], w["h"]), (480, 320), "the app's default size")
            p0 = (half_up(w["x"] + f0[0] * 480), half_up(w["y"] + f0[1] * 320))
            p1 = (half_up(w["x"] + f1[0] * 480), half_up(w["y"] + f1[1] * 320))
            want.append((p0, p1))
            self.assertEqual(r["backend"], "xtest")
            self.assertEqual(r["rung"], "literal" if r["index"] == 1 else "declared", r)
            self.assert_shots(out, r, annotated=True)
        self.assertEqual(rows[1]["target"], "field")
        self.assertEqual(rows[0]["drag"]["to_target"], "empty")
        lines = rec_lines(rec)
        drags = [l for l in lines if l.startswith("drag:")]
        self.assertEqual(len(drags), 2, lines)
        for line, (p0, p1) in zip(drags, want):
            m = re.fullmatch(r"drag:(\d+),(\d+)->(\d+),(\d+):(\d+)", line)
            self.assertTrue(m, line)
            got = tuple(int(v) for v in m.groups())
            self.assertEqual(got[:4], p0 + p1, "pressed at from:, released at to:")
            self.assertGreaterEqual(got[4], 1, "motion with the button held between")
        # button 1 only: one press and one release per drag, nothing else
        self.assertEqual([l for l in lines if not l.startswith(("drag:", "text:"))],
                         ["button:1", "release:1:%d,%d" % want[0][1],
                          "button:1", "release:1:%d,%d" % want[1][1]], lines)

    def test_hover_point_and_element_enter_without_a_click(self):
        """hover on a declared target and on an accessibility control: the test
        app records the pointer entering each (read by the steps' own checks,
        then from the record file), and nothing is pressed or toggled."""
        rec = os.path.join(self.tmp, "rec.txt")
        path = self.scenario(
            "name: hover\n"
            "launch: ${KSR_TESTAPP} --record-enter --record %s\n"
            "process: ^ksr-testapp$\n"
            "window: ^KSR Test App$\n"
            "settle_s: 0.5\n" % rec + TARGETS + "steps:\n"
            "  - hover: empty\n"
            "    checks:\n"
            "      - shell: \"! grep -q '^enter:' %s\"\n"
            "  - hover: press\n"
            "    checks:\n"
            "      - shell: grep -qx 'enter:Press me' %s\n"
            "  - hover: {element: Enable feature, role: check box}\n"
            "    checks:\n"
            "      - shell: grep -qx 'enter:Enable feature' %s\n" % (rec, rec, rec))
        out, _report, _se = self.run_ok(path)
        rows = {r["index"]: r for r in step_rows(out)}
        self.assertEqual([rows[i]["kind"] for i in (1, 2, 3)], ["hover"] * 3)
        self.assertEqual(rows[2]["rung"], "declared")
        self.assert_pixel_from_geometry(rows[2], 0.5, 0.13)
        self.assert_shots(out, rows[2], annotated=True)
        self.assertEqual(rows[3]["rung"], "element")
        self.assertEqual(rows[3]["element"]["name"], "Enable feature", rows[3])
        w, p = rows[3]["window"], rows[3]["pixel"]
        self.assertTrue(w["x"] <= p["x"] < w["x"] + w["w"] and w["y"] <= p["y"] < w["y"] + w["h"],
                        rows[3])
        lines = rec_lines(rec)
        self.assertIn("enter:Press me", lines)
        self.assertIn("enter:Enable feature", lines)
        self.assertNotIn("pressed", lines, "hover presses no button")
        self.assertFalse([l for l in lines if l.startswith("checked:")], lines)

    def test_target_window_dialog(self):
        """Fractions of a dialog, by a declared target with its own window and by
        target: window on a literal fraction; the dialogs close."""
        path = self.scenario(
            "name: dialogs\n"
            "desktop: true\n"
            "settle_s: 0.2\n"
            "atspi: false\n"
            "targets:\n"
            "  close: {at: %s, window: \"^KSR Notice$\"}\n"
            "steps:\n"
            "  - spawn: {command: '${KSR_TESTAPP} --error-dialog \"KSR Notice\"',"
            " window: ^KSR Notice$, as: one}\n"
            "  - click: close\n"
            "    checks:\n"
            "      - no_window: ^KSR Notice$\n"
            "      - window: ^KSR Test App$\n"
            "  - spawn: {command: '${KSR_TESTAPP} --error-dialog \"KSR Second\"',"
            " window: ^KSR Second$, as: two}\n"
            "  - click: \"%s %s\"\n"
            "    target: window \"^KSR Second$\"\n"
            "    checks:\n"
            "      - no_window: ^KSR Second$\n" % (CLOSE, CLOSE[0], CLOSE[1]))
        out, _report, _se = self.run_ok(path)
        rows = {r["index"]: r for r in step_rows(out)}
        self.assertEqual(rows[2]["window_title"], "KSR Notice")
        self.assertEqual(rows[2]["rung"], "declared")
        self.assertEqual(rows[4]["window_title"], "KSR Second")
        self.assertEqual(rows[4]["rung"], "literal")
        for i in (2, 4):
            self.assertLess(rows[i]["window"]["w"], 480, "the dialog's geometry, not the app's")
            self.assert_pixel_from_geometry(rows[i], CLOSE[0], CLOSE[1])
            self.assert_shots(out, rows[i], annotated=True)
        self.assertAppGone(["ksr-testapp"])

    def test_alt_f4_closes_window(self):
        path = self.scenario(
            "name: altf4\n"
            "desktop: true\n"
            "settle_s: 0.2\n"
            "atspi: false\n"
            "steps:\n"
            "  - spawn: {command: '${KSR_TESTAPP}', window: ^KSR Test App$, as: app}\n"
            "  - key: alt+F4\n"
            "    checks:\n"
            "      - no_window: ^KSR Test App$\n"
            "  - kill: app\n")
        out, _report, _se = self.run_ok(path)
        rows = {r["index"]: r for r in step_rows(out)}
        self.assertEqual(rows[2]["checks"][0]["status"], "held")
        self.assertEqual(rows[3]["status"], "ok")
        # the app may still be exiting when kill runs; if it had ended, cleanly
        self.assertIn(rows[3].get("ended_before_kill", "exited with status 0"),
                      ("exited with status 0",))

    def test_key_with_target_window_reaches_the_dialog(self):
        # key with target: window sends the keys to that window (the app's
        # message dialog here): Escape closes it. Without target: the keys go
        # to the app's main window, which this dialog does not block.
        rec = os.path.join(self.tmp, "rec.txt")
        path = self.scenario(
            "name: dialog-keys\n"
            "launch: ${KSR_TESTAPP} --record %s --error-dialog \"KSR Keys Dialog\"\n"
            "process: ^ksr-testapp$\n"
            "window: ^KSR Test App$\n"
            "settle_s: 0.5\n"
            "atspi: false\n"
            "error_dialogs: []\n"
            "steps:\n"
            "  - wait_window: ^KSR Keys Dialog$\n"
            "  - key: Escape\n"
            "    target: window \"^KSR Keys Dialog$\"\n"
            "    checks:\n"
            "      - no_window: ^KSR Keys Dialog$\n" % rec)
        out, _report, _se = self.run_ok(path, verdict="pass-with-concerns")
        rows = {r["index"]: r for r in step_rows(out)}
        self.assertEqual(rows[2]["window_title"], "KSR Keys Dialog")
        self.assertEqual(rows[2]["checks"][0]["status"], "held")

    def test_zenity_entry_receives_text(self):
        got = os.path.join(self.tmp, "entry.txt")
        text = ASCII + " " + SHIFTED + " " + UNICODE
        path = self.scenario(
            "name: zenity-entry\n"
            "desktop: true\n"
            "settle_s: 0.2\n"
            "atspi: false\n"
            "steps:\n"
            "  - spawn: {command: 'zenity --entry --title \"KSR Entry\" --text Name > %s',"
            " window: ^KSR Entry$, process: ^zenity$, as: entry}\n"
            "  - type: \"%s\"\n"
            "  - key: Return\n"
            "    checks:\n"
            "      - no_window: ^KSR Entry$\n"
            "      - file: %s\n"
            "  - kill: entry\n" % (got, text, got))
        self.run_ok(path)
        with open(got, encoding="utf-8") as f:
            self.assertEqual(f.read(), text + "\n", "zenity printed exactly what was typed")

    def test_failing_check_is_app_failed_with_line(self):
        """A click that misses the button: the check on its effect fails, the
        run ends app-failed / check-failed naming the step's line."""
        rec = os.path.join(self.tmp, "rec.txt")
        path = self.app_scenario(
            "  - click: empty\n"
            "    checks:\n"
            "      - shell: grep -qx pressed %s\n"
            "        timeout_s: 1\n" % rec, rec)
        out, report, _se = self.run_ok(path, "app-failed", "check-failed")
        line = ksr.line_of(path, "click: empty")
        self.assertTrue(ksr.names_line(report["reason"], line), report["reason"])
        self.assertIn("shell", report["reason"])
        row = report["steps"][0]
        self.assertEqual(row["status"], "failed")
        self.assertEqual(row["checks"][0]["status"], "failed")
        self.assertEqual(row["annotated"], "01-step-annotated.png",
                         "the marker shows where the failing click went")
        self.assertTrue(os.path.isfile(os.path.join(out, "99-failure.png")))
        self.assertNotIn("pressed", rec_lines(rec))

    def test_missing_target_window_fails_step(self):
        rec = os.path.join(self.tmp, "rec.txt")
        path = self.app_scenario(
            "  - click: center\n"
            "    target: window \"^No Such Dialog$\"\n"
            "    timeout_s: 1\n", rec)
        _out, report, _se = self.run_ok(path, "app-failed", "step-failed")
        self.assertTrue(ksr.names_line(report["reason"], ksr.line_of(path, "click: center")))
        self.assertIn("No Such Dialog", report["reason"])


if __name__ == "__main__":
    unittest.main()
