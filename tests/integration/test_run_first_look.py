"""First look (docs/scenario.md#baselines): baselines. A baseline made by one run with
--update-baseline, then compared: a match passes, a changed region is a
`baseline-drift` concern carrying the figure and a diff image, a mask over the
changed region passes again; no baseline writes a candidate; a baseline of
another size is drift; a baseline that is not a PNG is a test-error.

The changing region is an xterm at a user-specified position (+0+0, which
openbox honours) whose background colour the test chooses; the app is started
only once the xterm is mapped, so openbox places it the same way every run.
The mask and the figures expected are computed from the xterm's frame as the
window manager placed it (a shell step records it), not from a size measured
once: an 80x24 xterm is as large as its font makes it."""

import json
import os
import re
import struct
import textwrap
import unittest
import zlib

import ksr

SCENARIO = textwrap.dedent("""\
    name: first-look-baseline
    launch: >-
      xterm -T ksr-mark -fa Monospace -fs 10 -geometry 80x24+0+0 -bg ${KSR_IT_BG} -e sleep 600 &
      until xwininfo -name ksr-mark >/dev/null 2>&1; do sleep 0.1; done;
      exec ${KSR_TESTAPP}
    process: ^ksr-testapp$
    window: ^KSR Test App$
    launch_timeout_s: 30
    settle_s: 1
    atspi: false
    steps:
      - shell: >-
          for w in ksr-mark "KSR Test App"; do
          xwininfo -name "$w" && xprop -name "$w" _NET_FRAME_EXTENTS || exit 1;
          echo; done > "$KSR_IT_GEOM"
    """)

SCREEN = (1280, 720)


def read_frames(path):
    """The xterm's and the app's windows, each as (frame, client): rectangles
    (x, y, w, h) in pixels, from xwininfo's client rectangle and the window
    manager's _NET_FRAME_EXTENTS (left, right, top, bottom)."""
    with open(path, encoding="utf-8") as f:
        parts = f.read().split("xwininfo: Window id:")[1:]
    if len(parts) != 2:
        raise AssertionError("two windows' geometry expected in %s" % path)
    return [read_frame(text) for text in parts]


def read_frame(text):
    def field(name):
        m = re.search(r"%s:\s+(-?\d+)" % re.escape(name), text)
        if not m:
            raise AssertionError("no %s in the recorded geometry:\n%s" % (name, text))
        return int(m.group(1))

    x, y = field("Absolute upper-left X"), field("Absolute upper-left Y")
    w, h = field("Width"), field("Height")
    m = re.search(r"_NET_FRAME_EXTENTS\(CARDINAL\) = (\d+), (\d+), (\d+), (\d+)", text)
    left, right, top, bottom = (int(v) for v in m.groups()) if m else (0, 0, 0, 0)
    return (x - left, y - top, w + left + right, h + top + bottom), (x, y, w, h)


def overlap(a, b):
    """The area two rectangles (x, y, w, h) share."""
    w = min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0])
    h = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
    return max(0, w) * max(0, h)


def mask_over(frame, margin=2):
    """A baseline_mask entry (fractions of the screen) covering frame and a
    margin of a few pixels around it."""
    x, y, w, h = frame
    sw, sh = SCREEN
    x0, y0 = max(0, x - margin), max(0, y - margin)
    x1, y1 = min(sw, x + w + margin), min(sh, y + h + margin)
    return [round(x0 / sw, 4), round(y0 / sh, 4), round((x1 - x0) / sw, 4),
            round((y1 - y0) / sh, 4)]


def write_png(path, w, h, rgb=(0, 128, 255)):
    """A solid RGB PNG, written with the standard library only."""
    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff))
    row = b"\x00" + bytes(rgb) * w
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(row * h)))
        f.write(chunk(b"IEND", b""))


class RunFirstLookTest(ksr.KsrTestCase):

    def env(self, **extra):
        extra.setdefault("KSR_TESTAPP", ksr.TESTAPP)
        extra.setdefault("KSR_IT_BG", "black")
        return super().env(**extra)

    def geometry(self, out):
        return os.path.join(self.tmp, os.path.basename(out) + ".geom")

    def run_scenario(self, text, name="scenario.yaml", out="out", args=(), env=None):
        path = self.scenario(textwrap.dedent(text), name=name)
        out = self.out(out)
        env = dict(env if env is not None else self.env(), KSR_IT_GEOM=self.geometry(out))
        rc, so, se, el = self.run_rt(["run", "--xvfb"] + list(args) + [path], out=out,
                                     timeout=120, env=env)
        self.assertNoSanitizerReport(se)
        return out, rc, se

    def artifacts(self, report):
        return {a["name"]: a["kind"] for a in report["artifacts"]}

    def codes(self, report):
        return [c["code"] for c in report["concerns"]]

    def events(self, out, name):
        return [e for e in ksr.read_trace(out) if e.get("event") == name]

    def test_no_baseline_key_writes_a_candidate(self):
        out, rc, se = self.run_scenario(SCENARIO)
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        self.assertEqual(report["concerns"], [])
        arts = self.artifacts(report)
        self.assertEqual(arts.get("baseline-candidate.png"), "baseline-candidate", arts)
        self.assertEqual(arts.get("00-first-look.png"), "screenshot", arts)
        self.assertEqual(ksr.png_size(os.path.join(out, "baseline-candidate.png")), (1280, 720))
        with open(os.path.join(out, "baseline-candidate.png"), "rb") as a, \
                open(os.path.join(out, "00-first-look.png"), "rb") as b:
            self.assertEqual(a.read(), b.read(), "the candidate is the first-look screenshot")

    def test_update_match_drift_and_mask(self):
        base = os.path.join(self.tmp, "baselines", "app.png")
        os.makedirs(os.path.dirname(base))
        text = SCENARIO + "baseline: baselines/app.png\n"

        # 1. no baseline file yet: a candidate, no concern
        out, rc, se = self.run_scenario(text, out="out0")
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        self.assertIn("baseline-candidate.png", self.artifacts(report))
        self.assertFalse(os.path.exists(base))

        # 2. --update-baseline writes the screenshot to the baseline path
        out, rc, se = self.run_scenario(text, out="out1", args=["--update-baseline"])
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        self.assertTrue(os.path.exists(base), "--update-baseline wrote no baseline")
        self.assertEqual(ksr.png_size(base), (1280, 720))
        with open(base, "rb") as a, open(os.path.join(out, "00-first-look.png"), "rb") as b:
            self.assertEqual(a.read(), b.read(), "the baseline is the first-look screenshot")
        self.assertNotIn("baseline-drift", self.codes(report))
        upd = self.events(out, "baseline.update")
        self.assertEqual([(e["path"], e["written"]) for e in upd], [(base, True)])

        # 3. the same screen again: it matches
        out, rc, se = self.run_scenario(text, out="out2")
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        cmp = self.events(out, "baseline")
        self.assertEqual(len(cmp), 1, cmp)
        self.assertLessEqual(cmp[0]["fraction"], 0.02, cmp[0])
        self.assertFalse(cmp[0]["size_mismatch"])
        (frame, client), (app_frame, _app) = read_frames(self.geometry(out))
        screen_px = SCREEN[0] * SCREEN[1]
        # what shows of the xterm's own area (the app's window may cover part
        # of it, as xfwm4 places it) is well over the 2% tolerance, or step 4
        # proves nothing
        shown = client[2] * client[3] - overlap(client, app_frame)
        self.assertGreater(shown / screen_px, 0.05, (frame, client, app_frame))

        # 4. the xterm turns white: drift, with the figure and a diff image
        out, rc, se = self.run_scenario(text, out="out3", env=self.env(KSR_IT_BG="white"))
        report = self.assertEvidence(out, "pass-with-concerns", "completed", rc=rc, stderr=se)
        drift = [c for c in report["concerns"] if c["code"] == "baseline-drift"]
        self.assertEqual(len(drift), 1, report["concerns"])
        m = re.match(r"^(\d+\.\d\d)% of pixels differ from the baseline (.+) \(tolerance 2%\)$",
                     drift[0]["message"])
        self.assertIsNotNone(m, drift[0]["message"])
        self.assertEqual(m.group(2), base)
        cmp = self.events(out, "baseline")[0]
        self.assertAlmostEqual(float(m.group(1)), cmp["fraction"] * 100, places=2)
        # nearly every pixel of the xterm's area that shows turned (its cursor stays)
        self.assertGreater(cmp["fraction"], 0.9 * shown / screen_px, (cmp, client, app_frame))
        self.assertEqual(self.artifacts(report).get("first-look-diff.png"), "diff")
        self.assertEqual(ksr.png_size(os.path.join(out, "first-look-diff.png")), (1280, 720))
        self.assertIn(m.group(1) + "%", report["reason"])

        # 5. a mask over the xterm's frame, as the window manager placed it:
        # the same change passes
        masked = text + "baseline_mask: [%s]\n" % json.dumps(mask_over(frame))
        out, rc, se = self.run_scenario(masked, name="masked.yaml", out="out4",
                                        env=self.env(KSR_IT_BG="white"))
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        cmp = self.events(out, "baseline")[0]
        self.assertLessEqual(cmp["fraction"], 0.02, cmp)
        self.assertEqual(cmp["masks"], 1)
        fw, fh = frame[2], frame[3]
        self.assertLessEqual(cmp["compared"], screen_px - fw * fh,
                             "masked pixels are not compared (%r)" % (frame,))
        self.assertNotIn("first-look-diff.png", self.artifacts(report))

    def test_size_mismatch_is_drift(self):
        write_png(os.path.join(self.tmp, "small.png"), 64, 48)
        out, rc, se = self.run_scenario(SCENARIO + "baseline: small.png\n")
        report = self.assertEvidence(out, "pass-with-concerns", "completed", rc=rc, stderr=se)
        self.assertEqual(self.codes(report), ["baseline-drift"])
        self.assertEqual(report["concerns"][0]["message"],
                         "the screen is 1280x720 but the baseline %s is 64x48"
                         % os.path.join(self.tmp, "small.png"))
        self.assertNotIn("baseline-candidate.png", self.artifacts(report))

    def test_unreadable_baseline_is_a_test_error(self):
        # a Git LFS pointer where the PNG should be
        with open(os.path.join(self.tmp, "lfs.png"), "w") as f:
            f.write("version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 1\n")
        out, rc, se = self.run_scenario(SCENARIO + "baseline: lfs.png\n")
        report = self.assertEvidence(out, "test-error", "invalid-scenario", rc=rc, stderr=se)
        self.assertIn("is not a readable PNG", report["reason"])
        self.assertTrue(report["failures"][0]["setup_fault"])


if __name__ == "__main__":
    unittest.main()
