"""Did the input do anything, and evidence to the last frame (docs/report.md
"Effect of an input step"; docs/scenario.md expect_effect). The app is
tests/app/ksr-latepaint.c with --keys, a plain Xlib window: space repaints it,
Return retitles it and only then draws its new content in frames, every other
key is ignored; and the GTK3 test app for click_element. On the runtime's own
--xvfb session; nothing is mocked, nothing here is timed."""

import os
import shutil
import subprocess
import textwrap
import unittest

import ksr

LATEPAINT = os.environ.get("KSR_LATEPAINT", "")
HOSTILE_X = os.environ.get("KSR_HOSTILE_X", "")
TITLE = "KSR Late Paint"


def latepaint_scenario(steps, launch=None):
    return textwrap.dedent("""\
        name: effect
        launch: %s
        process: ^ksr-latepaint$
        window: ^%s$
        launch_timeout_s: 30
        settle_s: 0.5
        atspi: false
        steps:
        """) % (launch or "exec %s --keys 0" % LATEPAINT, TITLE) + textwrap.dedent(steps)


def step_effect(step):
    return step["details"].get("effect")


def same_picture(tc, a, b, box):
    """The two screenshots agree on every 3rd pixel of box (x, y, w, h)."""
    wa, ha, pa = ksr.read_png_rgb(a)
    wb, hb, pb = ksr.read_png_rgb(b)
    tc.assertEqual((wa, ha), (wb, hb))
    x0, y0, w, h = box
    differ = [(x, y) for y in range(max(y0, 0), min(y0 + h, ha), 3)
              for x in range(max(x0, 0), min(x0 + w, wa), 3) if pa(x, y) != pb(x, y)]
    return differ


class EffectTest(ksr.KsrTestCase):
    needs_testapp = False

    def setUp(self):
        super().setUp()
        if not LATEPAINT or not os.access(LATEPAINT, os.X_OK):
            self.fail("KSR_LATEPAINT is not the built ksr-latepaint: %r" % LATEPAINT)

    def run_scenario(self, path, verdict, outcome="completed"):
        out = self.out()
        rc, _so, se, _el = self.run_rt(["run", "--xvfb", path], out=out, timeout=180)
        self.assertNoSanitizerReport(se)
        return out, self.assertEvidence(out, verdict, outcome, rc=rc, stderr=se)

    def test_key_the_app_ignores_is_a_no_effect_concern(self):
        """F9 means nothing to the app: effect none, and a step without checks
        that changed nothing is a no-effect concern naming the step."""
        path = self.scenario(latepaint_scenario("""\
            - key: F9
            """))
        out, report = self.run_scenario(path, "pass-with-concerns")
        (step,) = report["steps"]
        self.assertEqual(step_effect(step), "none", step)
        codes = [c["code"] for c in report["concerns"]]
        self.assertEqual(codes, ["no-effect"], report["concerns"])
        line = ksr.line_of(path, "- key: F9")
        self.assertEqual(report["concerns"][0]["message"],
                         "key F9 (line %d) changed nothing in the app" % line)

    def test_another_clients_window_is_not_the_apps_effect(self):
        """F9 means nothing to the app, but another X client (a hotkey
        daemon: ksr-hostile-x --map-on-key, a passive grab that passes the
        press on) maps a window of its own at each F9 press: the display
        changed, the app did not. Still effect none and the no-effect
        concern; the other client's window is in the trace's changes only."""
        if not HOSTILE_X or not os.access(HOSTILE_X, os.X_OK):
            self.fail("KSR_HOSTILE_X is not the built ksr-hostile-x: %r" % HOSTILE_X)
        # the app starts once the other client holds its grab ("ready")
        launch = "sh -c '%s --map-on-key F9 | { read r; exec %s --keys 0; }'" % (
            HOSTILE_X, LATEPAINT)
        path = self.scenario(latepaint_scenario("""\
            - key: F9
            """, launch))
        out, report = self.run_scenario(path, "pass-with-concerns")
        (step,) = report["steps"]
        self.assertEqual(step_effect(step), "none", step)
        self.assertEqual([c["code"] for c in report["concerns"]], ["no-effect"],
                         report["concerns"])
        with open(os.path.join(out, "launch.log")) as f:
            self.assertIn("ksr-hostile-x: mapped window", f.read(), "the other client saw F9")

    def test_key_that_repaints_has_an_effect_and_no_concern(self):
        """space repaints the window: effect repaint, a plain pass, and the
        run ends with its final screenshot after the final checks."""
        path = self.scenario(latepaint_scenario("""\
            - key: space
            """))
        out, report = self.run_scenario(path, "pass")
        (step,) = report["steps"]
        self.assertIn("repaint", step_effect(step).split("+"), step)
        self.assertEqual(report["concerns"], [])
        final = os.path.join(out, "99-final.png")
        self.assertTrue(os.path.isfile(final), ksr.list_files(out))
        ksr.png_size(final)
        self.assertFalse(os.path.exists(os.path.join(out, "99-failure.png")))

    def test_expect_effect_false_allows_a_key_that_does_nothing(self):
        path = self.scenario(latepaint_scenario("""\
            - key: F9
              expect_effect: false
            """))
        _out, report = self.run_scenario(path, "pass")
        (step,) = report["steps"]
        self.assertEqual(step_effect(step), "none", step)
        self.assertEqual(report["concerns"], [])

    def test_check_on_a_title_is_followed_by_the_repaint(self):
        """Return retitles the window 300 ms later and draws its content in
        frames after that: the check on the title holds first; the step's
        screenshot must show the content drawn, the same picture as the next
        step's (which the app has finished drawing by then) and as the final
        screenshot taken after the final checks."""
        path = self.scenario(latepaint_scenario("""\
            - key: Return
              checks:
                - window: "^%s - Done$"
            - key: F9
              checks:
                - window: "^%s - Done$"
            """ % (TITLE, TITLE)))
        out, report = self.run_scenario(path, "pass")
        first, second = report["steps"]
        self.assertEqual(first["checks"][0]["status"], "held", first)
        win = report["app"]["window"]
        box = (win["x"], win["y"], win["w"], win["h"])
        shot, later = (os.path.join(out, s["screenshot"]) for s in (first, second))
        differ = same_picture(self, shot, later, box)
        self.assertEqual(differ[:5], [], "%d pixels differ" % len(differ))
        differ = same_picture(self, later, os.path.join(out, "99-final.png"), box)
        self.assertEqual(differ[:5], [], "%d pixels differ" % len(differ))
        self.assertIn("settled_after_checks", first["details"], first)

    def test_video_ends_after_the_final_checks(self):
        """run --video: Return retitles the window, then draws its content in
        frames; the step's check holds on the title before that. The video's
        last frame is the screen after the final checks: close to
        99-final.png (VP8, lossy), and far from the first look, which shows
        the window before Return, so a video that stopped before the content
        was drawn would not pass."""
        if not shutil.which("ffmpeg"):
            ksr.skip_unless_installable(self, "ffmpeg is not installed (scripts/setup.sh)")
        path = self.scenario(latepaint_scenario("""\
            - key: Return
              checks:
                - window: "^%s - Done$"
            """ % TITLE))
        out = self.out()
        rc, _so, se, _el = self.run_rt(["run", "--xvfb", "--video", path], out=out, timeout=180)
        self.assertNoSanitizerReport(se)
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        self.assertEqual(report["video"]["name"], "video.webm", report["video"])
        final = os.path.join(out, "99-final.png")
        w, h = ksr.png_size(final)
        last = os.path.join(self.tmp, "last.png")
        # every frame decoded into the same file: the last one stays
        r = subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", os.path.join(out, "video.webm"),
                            "-vf", "scale=%d:%d" % (w, h), "-fps_mode", "passthrough",
                            "-pix_fmt", "rgb24", "-update", "1", last],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        win = report["app"]["window"]
        box = (win["x"], win["y"], win["w"], win["h"])
        near = far_share(last, final, box)
        # VP8 at its real-time speed loses quality when the machine is loaded
        # (6.7% of the window's blocks past the tolerance in a ctest -j2 run,
        # 0% alone); a video stopped before the content was drawn is 100%.
        self.assertLess(near, 0.25, "the video's last frame is not the final screen (%.1f%% "
                        "of the window differs)" % (near * 100))
        first = far_share(last, os.path.join(out, "00-first-look.png"), box)
        self.assertGreater(first, 0.2, "Return's content is not told from the first look")


def far_share(a, b, box, block=8, tolerance=32):
    """The share of box's block x block squares whose mean colours in a and b
    differ by more than tolerance in a channel: a lossy video frame (VP8
    smears edges and text, a square's mean stays) against a PNG."""
    wa, ha, pa = ksr.read_png_rgb(a)
    wb, hb, pb = ksr.read_png_rgb(b)
    assert (wa, ha) == (wb, hb), ((wa, ha), (wb, hb))
    x0, y0, w, h = box
    x0, y0 = max(x0, 0), max(y0, 0)
    x1, y1 = min(x0 + w, wa), min(y0 + h, ha)
    seen = far = 0
    for by in range(y0, y1 - block + 1, block):
        for bx in range(x0, x1 - block + 1, block):
            sa, sb = [0, 0, 0], [0, 0, 0]
            for y in range(by, by + block, 2):
                for x in range(bx, bx + block, 2):
                    for k, (c, d) in enumerate(zip(pa(x, y), pb(x, y))):
                        sa[k] += c
                        sb[k] += d
            n = (block // 2) ** 2
            seen += 1
            if max(abs(c - d) for c, d in zip(sa, sb)) > tolerance * n:
                far += 1
    return far / max(seen, 1)


class ClickElementShotTest(ksr.KsrTestCase):
    def test_click_element_step_has_screenshot_and_effect(self):
        sc = self.scenario(textwrap.dedent("""\
            launch: %s --no-cursor-blink
            window: KSR Test App
            settle_s: 0.5
            steps:
              - click_element: "Press me"
            """) % ksr.TESTAPP)
        out = self.out()
        rc, _so, se, _t = self.run_rt(["run", "--xvfb", sc], out=out, timeout=180)
        self.assertNoSanitizerReport(se)
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        (step,) = report["steps"]
        self.assertIsNotNone(step["screenshot"], step)
        self.assertTrue(os.path.isfile(os.path.join(out, step["screenshot"])))
        # "Press me" sets the label below it: the window repainted.
        self.assertIn("repaint", step_effect(step).split("+"), step)
        self.assertEqual(report["concerns"], [])
        self.assertTrue(os.path.isfile(os.path.join(out, "99-final.png")))


if __name__ == "__main__":
    unittest.main()
