"""The watchdog: when the main thread is blocked where no cancel descriptor
reaches (Xlib waiting on a SIGSTOPped X server), the report and DONE are still
written before the deadline, and the process ends with exit code 2."""

import os
import signal
import textwrap
import time
import unittest

import ksr

SCENARIO = """\
    name: watchdog
    launch: xterm -T ksr-watchdog
    process: ^xterm$
    window: ^ksr-watchdog$
    settle_s: 1
    atspi: false
    steps:
      - wait_window: ^never-there$
        timeout_s: 120
    """


def xvfb_children(pid):
    """PIDs of Xvfb processes whose parent is pid (the runtime's private display)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        if name == "Xvfb" and ppid == pid:
            found.append(int(entry))
    return found


def kill_if_alive(pid):
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class RunWatchdogTest(ksr.KsrTestCase):
    needs_testapp = False

    def stop_display_in_steps(self, deadline_s, extra=()):
        path = self.scenario(textwrap.dedent(SCENARIO))
        out = self.out()
        rt = self.start_rt(["run", "--xvfb", "--deadline", str(deadline_s)] + list(extra)
                           + [path], out=out)
        ksr.wait_for_trace_event(out, ksr.in_stage("steps"), timeout=60, proc=rt)
        xvfb = xvfb_children(rt.pid)
        self.assertEqual(len(xvfb), 1, "the run's private Xvfb")
        os.kill(xvfb[0], signal.SIGSTOP)
        self.addCleanup(kill_if_alive, xvfb[0])
        return rt, out

    def test_deadline_with_a_stopped_x_server(self):
        started = time.monotonic()
        rt, out = self.stop_display_in_steps(deadline_s=20)
        rc = rt.wait(timeout=60)
        took = time.monotonic() - started
        self.assertLess(took, 40, "the run ends near its 20 s deadline (took %.1fs)" % took)
        self.assertNoSanitizerReport(rt.stderr)
        report = self.assertEvidence(out, "test-error", "deadline", rc=rc, stderr=rt.stderr)
        self.assertIn("deadline", report["reason"])

    def test_video_finished_with_a_stopped_x_server(self):
        """The video thread is stuck in Xlib too (its last frame never comes):
        the file is still finished, synced and named in the report before DONE."""
        rt, out = self.stop_display_in_steps(deadline_s=20, extra=["--video"])
        rc = rt.wait(timeout=60)
        self.assertNoSanitizerReport(rt.stderr)
        report = self.assertEvidence(out, "test-error", "deadline", rc=rc, stderr=rt.stderr)
        video = report["video"]
        self.assertIsNotNone(video)
        self.assertEqual(video["name"], "video.webm", video)
        self.assertIn("stuck", video["error"] or "")
        self.assertGreaterEqual(video["frames"], 1)
        self.assertNotIn(".video.webm.tmp", ksr.list_files(out))
        import json
        import subprocess
        res = subprocess.run(["ffprobe", "-v", "error", "-show_format", "-show_streams",
                              "-of", "json", os.path.join(out, "video.webm")],
                             capture_output=True, timeout=60)
        self.assertEqual(res.returncode, 0, res.stderr.decode()[-2000:])
        info = json.loads(res.stdout)
        self.assertEqual([s["codec_name"] for s in info["streams"]], ["vp9"])
        self.assertAlmostEqual(float(info["format"]["duration"]) * 1000, video["duration_ms"],
                               delta=50)

    def test_sigterm_with_a_stopped_x_server(self):
        rt, out = self.stop_display_in_steps(deadline_s=300)
        time.sleep(1)
        t_sig = time.monotonic()
        rt.signal(signal.SIGTERM)
        rc = rt.wait(timeout=90)
        took = time.monotonic() - t_sig
        self.assertLess(took, 45, "exit within the cancel grace (took %.1fs)" % took)
        self.assertNoSanitizerReport(rt.stderr)
        self.assertEvidence(out, "test-error", "interrupted", rc=rc, stderr=rt.stderr)


if __name__ == "__main__":
    unittest.main()
