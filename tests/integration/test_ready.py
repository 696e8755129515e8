"""Ready before input, settled after it (issue #16, docs/scenario.md#ready-and-settled):
a window that never stops repainting is acted on when the quiet wait's bound runs out,
with a note and no failure; typed text is in the step's own screenshot; the step rows
say what was waited for; a stopped app fails readiness within the step's timeout; a
declared click waits until the button under it is sensitive (the app on the AT-SPI bus).
Real Xvfb + openbox (the runtime's --xvfb), the GTK3 test app and its GTK 4 twin (ksr-testapp4); what the app did is
read from its --record file and the screenshots' pixels, never from the runtime's words."""

import math
import os
import signal
import unittest

import ksr

# The test app's 480x320 client area (test_input.py read it off a first-look
# screenshot): the text field spans y 134..166, x 24..456.
FIELD = (24, 134, 456, 166)
TARGETS = "targets:\n  field: [0.5, 0.47]\n  ok: [0.5, 0.75]\n  press: [0.5, 0.12]\n"
COVER_MS = 3000  # --cover-for: the keep-above cover closes this long after the map
APP_SEEN_TICK_MS = 250  # the app wait's slowest look at a new window (test_alive.py)
ENABLE_MS = 1500  # --name-dialog: OK turns sensitive this long after the name has text


def name_dialog_steps(click_extra):
    """The "Name It" flow's steps (GTK 3 and GTK 4 apps alike): type a name,
    then at once the declared click on OK, which closes the dialog."""
    return ("  - type: \"hello\"\n"
            "  - click: ok\n%s"
            "    checks:\n"
            "      - no_window: ^Name It$\n"
            "        timeout_s: 1\n" % click_extra)
QUIET_BOUND_MS = 1000  # docs/scenario.md: the quiet wait's bound without timeout_s


def step_rows(out):
    return [e for e in ksr.read_trace(out) if e.get("event") == "step.end"]


def rec_lines(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().splitlines()
    except FileNotFoundError:
        return []


class ReadyTest(ksr.KsrTestCase):

    def env(self, **extra):
        extra.setdefault("KSR_TESTAPP", ksr.TESTAPP)
        return super().env(**extra)

    def app_scenario(self, app_args, steps, extra="", atspi=False, settle_s=0.5):
        return self.scenario(
            "name: ready\n"
            "launch: ${KSR_TESTAPP} %s\n"
            "process: ^ksr-testapp$\n"
            "window: ^KSR Test App$\n"
            "settle_s: %g\n"
            "atspi: %s\n" % (app_args, settle_s, "true" if atspi else "false")
            + extra + TARGETS + "steps:\n" + steps)

    def run_it(self, path, verdict, outcome):
        out = self.out()
        rc, _so, se, _el = self.run_rt(["run", "--xvfb", path], out=out, timeout=180)
        self.assertNoSanitizerReport(se)
        report = self.assertEvidence(out, verdict, outcome, rc=rc, stderr=se)
        return out, report

    def test_repainting_window_is_acted_on_after_the_bound_with_a_note(self):
        rec = os.path.join(self.tmp, "rec.txt")
        # A quiet interval of 300 ms, not the default 50: the app repaints
        # every 16 ms, and on a loaded machine (CI beside other tests) it can
        # miss 50 ms of frames, which would read as quiet.
        path = self.app_scenario("--animate --record %s" % rec,
                                 "  - click: field\n  - type: \"ab\"\n",
                                 extra="ready_quiet_ms: 300\n")
        out, _report = self.run_it(path, "pass", "completed")
        self.assertEqual(rec_lines(rec)[-1], "text:ab", "the input arrived")
        rows = step_rows(out)
        self.assertEqual([r["kind"] for r in rows], ["click", "type"])
        for r in rows:
            ready = r["ready"]
            self.assertIs(ready.get("repainting"), True, r)
            self.assertIn("kept repainting", ready.get("note", ""), r)
            self.assertEqual(ready["quiet_ms"], 300)
            # acted on when the bound ran out: not before it, not long after
            self.assertGreaterEqual(ready["quiet_waited_ms"], QUIET_BOUND_MS - 50, r)
            self.assertLess(ready["quiet_waited_ms"], QUIET_BOUND_MS + 2000, r)
            self.assertEqual(r["status"], "ok")
            self.assertIs(r["settled"].get("repainting"), True, r)

    def test_quiet_window_is_not_waited_for(self):
        """The control for the test above: the same steps without --animate."""
        rec = os.path.join(self.tmp, "rec.txt")
        path = self.app_scenario("--no-cursor-blink --record %s" % rec,
                                 "  - click: field\n  - type: \"ab\"\n")
        out, _report = self.run_it(path, "pass", "completed")
        self.assertEqual(rec_lines(rec)[-1], "text:ab")
        for r in step_rows(out):
            ready, settled = r["ready"], r["settled"]
            self.assertNotIn("repainting", ready, r)
            self.assertNotIn("note", ready, r)
            self.assertNotIn("repainting", settled, r)
            self.assertEqual(ready["answering"], "yes", r)
            self.assertLess(ready["quiet_waited_ms"], QUIET_BOUND_MS, r)
            # sane numbers: parts of the step, and settled counts its quiet
            # interval from the input
            self.assertGreaterEqual(ready["quiet_waited_ms"], 0)
            self.assertLessEqual(ready["quiet_waited_ms"], ready["waited_ms"], r)
            self.assertLessEqual(ready["waited_ms"] + settled["waited_ms"], r["duration_ms"], r)
            self.assertGreaterEqual(settled["waited_ms"], 50, r)
            self.assertLess(settled["waited_ms"], QUIET_BOUND_MS + 200, r)
            self.assertEqual(settled["quiet_ms"], 50)

    def test_typed_text_is_in_the_step_screenshot(self):
        """kcalc's complaint: the step's screenshot must show what the input did.
        Each type step's screenshot differs from the one before it inside the
        text field (the cursor does not blink: only the text can change it)."""
        rec = os.path.join(self.tmp, "rec.txt")
        path = self.app_scenario(
            "--no-cursor-blink --record %s" % rec,
            "  - click: field\n  - type: \"7\"\n  - type: \"2\"\n"
            "  - key: BackSpace\n")
        out, _report = self.run_it(path, "pass", "completed")
        self.assertEqual(rec_lines(rec)[-1], "text:7")
        rows = step_rows(out)
        self.assertEqual([r["screenshot"] for r in rows],
                         ["%02d-step.png" % i for i in (1, 2, 3, 4)])
        win = rows[0]["window"]
        for before, after in zip(rows, rows[1:]):
            self.assertEqual(after["window"], win, "the window did not move")
            _w, _h, a = ksr.read_png_rgb(os.path.join(out, before["screenshot"]))
            _w, _h, b = ksr.read_png_rgb(os.path.join(out, after["screenshot"]))
            x0, y0, x1, y1 = FIELD
            changed = sum(1 for y in range(win["y"] + y0, win["y"] + y1, 2)
                          for x in range(win["x"] + x0, win["x"] + x1, 2)
                          if a(x, y) != b(x, y))
            self.assertGreater(changed, 0, "%s shows the field as %s did"
                               % (after["screenshot"], before["screenshot"]))

    def test_stopped_app_fails_readiness_within_the_step_timeout(self):
        pidfile = os.path.join(self.tmp, "pid")
        path = self.app_scenario(
            "--print-pid > %s" % pidfile,
            "  - shell: kill -STOP $(cat %s)\n"
            "  - key: Tab\n"
            "    timeout_s: 2\n" % pidfile)
        try:
            out, report = self.run_it(path, "app-failed", "step-failed")
        finally:
            try:
                with open(pidfile) as f:
                    os.kill(int(f.read().split()[0]), signal.SIGCONT)
            except (OSError, ValueError, IndexError):
                pass
        rows = step_rows(out)
        self.assertEqual([r["kind"] for r in rows], ["shell", "key"])
        key = rows[1]
        self.assertEqual(key["status"], "failed")
        self.assertEqual(key["ready"]["never"], "answering", key)
        self.assertEqual(key["ready"]["answering"], "no", key)
        self.assertIn("did not answer a _NET_WM_PING", key["reason"])
        self.assertIn("for 2 s", key["reason"])
        self.assertNotIn("settled", key, "a step that never acted does not settle")
        # bounded by the step's timeout_s: 2
        self.assertGreaterEqual(key["duration_ms"], 2000 - 50, key)
        self.assertLess(key["duration_ms"], 2000 + 2000, key)
        self.assertIn("_NET_WM_PING", report["reason"])

    def name_dialog_flow(self, click_extra=""):
        """Type a name into the modal "Name It" dialog, then at once a declared
        click on its OK button, which the app enables ENABLE_MS after the
        name has text. No target: and no sleep: input goes to the dialog."""
        rec = os.path.join(self.tmp, "rec.txt")
        path = self.app_scenario(
            "--name-dialog %d --no-cursor-blink --record %s" % (ENABLE_MS, rec),
            name_dialog_steps(click_extra), atspi=True)
        return path, rec

    def assert_click_waited(self, path, rec):
        """The click waited for OK to turn sensitive and the app took it; the
        step rows, for more."""
        # The dialog is open at first look: the one concern is that (no
        # scenario key declares a dialog as expected).
        out, report = self.run_it(path, "pass-with-concerns", "completed")
        self.assertEqual([c["code"] for c in report["concerns"]], ["unexpected-dialog"])
        self.assertIn("confirmed:hello", rec_lines(rec), "the app took the click on OK")
        rows = step_rows(out)
        click = rows[1]
        self.assertEqual(click["window_title"], "Name It", "the click went to the dialog")
        self.assertEqual(click["ready"]["control"],
                         {"name": "OK", "role": "push button", "sensitive": True,
                          "showing": True}, click["ready"])
        return rows

    def assert_click_landed_on_insensitive(self, path, rec):
        out, _report = self.run_it(path, "app-failed", "check-failed")
        self.assertNotIn("confirmed:hello", rec_lines(rec))
        self.assertNotIn("control", step_rows(out)[1]["ready"])

    def test_click_waits_until_the_button_under_it_is_sensitive(self):
        self.assert_click_waited(*self.name_dialog_flow())

    def test_without_readiness_the_same_click_lands_on_the_insensitive_button(self):
        """The control: with readiness off at the click (ready_quiet_ms: 0), the
        very same click lands while OK is still insensitive and the app takes
        nothing: the wait above is what makes the flow pass."""
        self.assert_click_landed_on_insensitive(*self.name_dialog_flow("    ready_quiet_ms: 0\n"))

    def gtk4_name_dialog_flow(self, click_extra=""):
        """The same flow on GTK 4 (its own AT-SPI, no atk-bridge): the twin
        app's "Name It" dialog, OK enabled ENABLE_MS after the name has text."""
        if not (ksr.TESTAPP4 and os.access(ksr.TESTAPP4, os.X_OK)):
            self.fail("KSR_TESTAPP4 is not built (libgtk-4-dev: scripts/setup.sh deps)")
        rec = os.path.join(self.tmp, "rec.txt")
        path = self.scenario(
            "name: ready-gtk4\n"
            "launch: %s --name-dialog %d --record %s\n"
            "process: ^ksr-testapp4$\n"
            "window: ^KSR GTK4 App$\n"
            "settle_s: 0.5\n"
            "atspi: true\n" % (ksr.TESTAPP4, ENABLE_MS, rec)
            + TARGETS + "steps:\n" + name_dialog_steps(click_extra))
        return path, rec

    def test_gtk4_click_waits_until_the_button_under_it_is_sensitive(self):
        rows = self.assert_click_waited(*self.gtk4_name_dialog_flow())
        self.assertEqual(rows[0]["window_title"], "Name It", "the keys went to the dialog")

    def test_gtk4_without_readiness_the_click_lands_on_the_insensitive_button(self):
        self.assert_click_landed_on_insensitive(
            *self.gtk4_name_dialog_flow("    ready_quiet_ms: 0\n"))

    def test_button_that_never_turns_sensitive_names_it(self):
        """Nothing typed: OK stays insensitive; the step fails within its
        timeout, naming the control and the condition."""
        rec = os.path.join(self.tmp, "rec.txt")
        path = self.app_scenario(
            "--name-dialog %d --record %s" % (ENABLE_MS, rec),
            "  - click: ok\n"
            "    timeout_s: 2\n", atspi=True)
        out, report = self.run_it(path, "app-failed", "step-failed")
        click = step_rows(out)[0]
        self.assertEqual(click["ready"]["never"], "control", click)
        self.assertIn('the push button "OK" under the point stayed insensitive for 2 s',
                      click["reason"])
        self.assertEqual(rec_lines(rec), [])

    def test_covered_point_waits_until_uncovered(self):
        """A keep-above window of the app's over the whole window (activation
        cannot raise the target above it): the click waits, on stacking
        events, until the cover closes, then lands on the button."""
        rec = os.path.join(self.tmp, "rec.txt")
        path = self.app_scenario("--cover-for %d --record %s" % (COVER_MS, rec),
                                 "  - click: press\n", settle_s=0.2)
        out, _report = self.run_it(path, "pass", "completed")
        self.assertEqual(rec_lines(rec), ["pressed"], "the click reached the button")
        trace = ksr.read_trace(out)
        app = [e for e in trace if e.get("event") == "app"][0]
        start = [e for e in trace if e.get("event") == "step.start"][0]
        # The precondition of this test: the step began while the cover was up.
        self.assertLess(start["t_ms"], app["t_ms"] + COVER_MS - APP_SEEN_TICK_MS)
        click = step_rows(out)[0]
        self.assertNotIn("never", click["ready"])
        # It waited for the cover: ready ended no earlier than the close.
        self.assertGreaterEqual(click["t_ms"] - click["duration_ms"] + click["ready"]["waited_ms"],
                                app["t_ms"] - APP_SEEN_TICK_MS + COVER_MS - 100, click)

    def stays_covered(self, app_args, steps):
        """A step whose point is covered for good (--cover-for -1) fails within
        its 2 s, naming the cover: its row and the app's record."""
        rec = os.path.join(self.tmp, "rec.txt")
        path = self.app_scenario("--cover-for -1 %s--record %s" % (app_args, rec), steps)
        out, _report = self.run_it(path, "app-failed", "step-failed")
        row = step_rows(out)[0]
        self.assertEqual(row["ready"]["never"], "uncovered", row)
        self.assertRegex(row["reason"],
                         r'stayed covered by window 0x[0-9a-f]+ \("KSR Cover"\) for 2 s')
        return row, rec_lines(rec)

    def test_point_that_stays_covered_fails_naming_the_cover(self):
        _click, rec = self.stays_covered("", "  - click: press\n    timeout_s: 2\n")
        self.assertEqual(rec, [], "nothing was clicked")

    def test_drag_from_a_covered_point_fails_and_presses_nothing(self):
        """drag's readiness is at its from: point: covered for good, the step
        fails naming the cover, and the app received no press at all."""
        drag, rec = self.stays_covered("--record-pointer ",
                                       "  - drag: {from: press, to: field}\n    timeout_s: 2\n")
        self.assertNotIn("drag", drag, "no drag was sent")
        self.assertEqual([l for l in rec if l.startswith(("button:", "drag:"))], [],
                         "nothing was pressed")

    def test_drag_waits_for_the_cover_then_lands(self):
        """The same drag with a cover that closes: it waits (on stacking
        events) and then the app receives the press at from: and the release
        at to: (fractions of its window), motion between."""
        rec = os.path.join(self.tmp, "rec.txt")
        path = self.app_scenario("--cover-for %d --record-pointer --record %s" % (COVER_MS, rec),
                                 "  - drag: {from: press, to: field}\n", settle_s=0.2)
        out, _report = self.run_it(path, "pass", "completed")
        trace = ksr.read_trace(out)
        app = [e for e in trace if e.get("event") == "app"][0]
        start = [e for e in trace if e.get("event") == "step.start"][0]
        # The precondition of this test: the step began while the cover was up.
        self.assertLess(start["t_ms"], app["t_ms"] + COVER_MS - APP_SEEN_TICK_MS)
        drag = step_rows(out)[0]
        self.assertNotIn("never", drag["ready"])
        w = drag["window"]
        half_up = lambda v: math.floor(v + 0.5)  # C's lround
        x0, y0 = half_up(w["x"] + 0.5 * w["w"]), half_up(w["y"] + 0.12 * w["h"])
        x1, y1 = half_up(w["x"] + 0.5 * w["w"]), half_up(w["y"] + 0.47 * w["h"])
        drags = [l for l in rec_lines(rec) if l.startswith("drag:")]
        self.assertEqual(len(drags), 1, rec_lines(rec))
        self.assertRegex(drags[0], r"^drag:%d,%d->%d,%d:[1-9]\d*$" % (x0, y0, x1, y1))


if __name__ == "__main__":
    unittest.main()
