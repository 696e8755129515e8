#!/usr/bin/env python3
"""The run's video, on vs off, in one run each at 1920x1080 (docs/benchmarks.md):
the added latency per step (a key step's duration_ms, median), the runtime's
CPU share over the steps (its own utime+stime, threads included, from
/proc/PID/stat at the first step's start and the final checks' start, over the
wall time between), and the file size per minute of run. Beside it FFmpeg's
own x11grab recording the same app on a display of the same size with the same
encoder settings for the same time: its CPU share and size per minute.

  bench/video.py BUILD_DIR [SECONDS]     (an optimised build, no sanitizers)

The app repaints all the time (an xterm printing the time every 50 ms), the
worst case for a recorder that captures only when the screen changes."""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

HZ = os.sysconf("SC_CLK_TCK")
SIZE = "1920x1080"
FPS = 10
APP = ("xterm -geometry 230x75+0+0 -T ksr-video-bench -e sh -c "
       "'while :; do date +%H:%M:%S.%N; sleep 0.05; done'")


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / HZ


def trace(out):
    try:
        with open(os.path.join(out, "trace.jsonl"), "rb") as f:
            lines = f.read().split(b"\n")[:-1]
    except FileNotFoundError:
        return []
    return [json.loads(l) for l in lines if l.strip()]


def wait_event(out, pred, proc, timeout=300):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(pred(e) for e in trace(out)):
            return
        if proc.poll() is not None:
            raise SystemExit("the run ended early (rc %s)" % proc.returncode)
        time.sleep(0.02)
    raise SystemExit("timed out waiting in %s" % out)


def one_run(binary, tmp, seconds, video):
    steps = max(2, int(seconds / 3))
    body = "".join("  - key: Return\n  - sleep: 2.9\n" for _ in range(steps))
    path = os.path.join(tmp, "video-%s.yaml" % ("on" if video else "off"))
    with open(path, "w") as f:
        f.write(textwrap.dedent("""\
            name: video-bench
            launch: %s
            process: ^xterm$
            window: ^ksr-video-bench$
            settle_s: 1
            atspi: false
            steps:
            """) % APP + body)
    out = os.path.join(tmp, "out-%s" % ("on" if video else "off"))
    env = dict(os.environ, KASM_RUNTIME_XVFB_SIZE=SIZE)
    env.pop("DISPLAY", None)
    args = [binary, "run", "--xvfb", "--out", out] + (["--video"] if video else []) + [path]
    p = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_event(out, lambda e: e.get("event") == "step.start", p)
    c0, t0 = cpu_s(p.pid), time.monotonic()
    wait_event(out, lambda e: e.get("event") == "stage.start" and e.get("name") == "final-checks",
               p)
    c1, t1 = cpu_s(p.pid), time.monotonic()
    p.wait(timeout=120)
    with open(os.path.join(out, "report.json")) as f:
        report = json.load(f)
    keys = [s["duration_ms"] for s in report["steps"] if s["kind"] == "key"]
    res = {"verdict": report["verdict"], "key_ms": statistics.median(keys),
           "cpu": 100.0 * (c1 - c0) / (t1 - t0)}
    v = report.get("video")
    if video and v and v.get("name"):
        res["mb_per_min"] = v["bytes"] / 1e6 / (v["duration_ms"] / 60000.0)
        res["frames_per_s"] = v["frames"] / (v["duration_ms"] / 1000.0)
    return res


def ffmpeg_run(tmp, seconds):
    # -displayfd: Xvfb picks a free display and says which, once it accepts
    # connections (a fixed number could be another session's display).
    r, w = os.pipe()
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(w), "-screen", "0", SIZE + "x24",
                             "-nolisten", "tcp"], pass_fds=(w,),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(w)
    with os.fdopen(r) as f:
        disp = ":" + f.readline().strip()
    try:
        env = dict(os.environ, DISPLAY=disp)
        wm = subprocess.Popen(["openbox"], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
        app = subprocess.Popen(["sh", "-c", APP], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        time.sleep(2)  # the app up before the clock starts
        out = os.path.join(tmp, "ffmpeg.webm")
        t0 = time.monotonic()
        ff = subprocess.Popen(["ffmpeg", "-v", "error", "-y", "-f", "x11grab", "-framerate",
                               str(FPS), "-video_size", SIZE, "-i", disp, "-t", str(seconds),
                               "-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8",
                               "-row-mt", "1", "-lag-in-frames", "0", "-crf", "36", "-b:v", "0",
                               "-tune-content", "screen", "-threads", "2", out],
                              stdin=subprocess.DEVNULL)
        _, status, ru = os.wait4(ff.pid, 0)
        wall = time.monotonic() - t0
        for p in (app, wm):
            p.kill()
            p.wait()
        return {"cpu": 100.0 * (ru.ru_utime + ru.ru_stime) / wall,
                "mb_per_min": os.path.getsize(out) / 1e6 / (seconds / 60.0)}
    finally:
        xvfb.kill()
        xvfb.wait()


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build-bench"
    seconds = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    binary = os.path.join(build, "kasm-session-runtime")
    cache = os.path.join(build, "CMakeCache.txt")
    if os.path.exists(cache) and "KSR_SANITIZE:BOOL=ON" in open(cache).read():
        raise SystemExit("video.py: %s is a sanitizer build" % build)
    tmp = tempfile.mkdtemp(prefix="ksr-bench-video-")
    try:
        off = one_run(binary, tmp, seconds, False)
        on = one_run(binary, tmp, seconds, True)
        ff = ffmpeg_run(tmp, seconds)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("# the run's video at %s, at most %d frames/s, %d s of steps" % (SIZE, FPS, seconds))
    print()
    print("| measure | video off | video on | ffmpeg x11grab (same encoder settings) |")
    print("|---|---|---|---|")
    print("| key step, median duration_ms | %.0f | %.0f (%+.0f) | – |"
          % (off["key_ms"], on["key_ms"], on["key_ms"] - off["key_ms"]))
    print("| CPU share over the steps (%% of one core) | %.1f | %.1f | %.1f |"
          % (off["cpu"], on["cpu"], ff["cpu"]))
    print("| file size per minute (MB) | – | %.2f | %.2f |"
          % (on.get("mb_per_min", float("nan")), ff["mb_per_min"]))
    print("| frames a second recorded | – | %.1f | %d |" % (on.get("frames_per_s", 0), FPS))
    print()
    print("verdicts: off %s, on %s" % (off["verdict"], on["verdict"]))


if __name__ == "__main__":
    main()
