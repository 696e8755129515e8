#!/usr/bin/python3
"""bench_watch: (1) latency from DONE being written (renamed into place, as the
runtime does) to `watch` printing the terminal line; (2) CPU used by `watch`
over IDLE seconds with N live runs watched (no change at all). Synthetic
evidence folders: a run.start line whose pid is a live `sleep`, so the watcher
holds a pidfd per run as it does for real runtimes. Prints markdown tables."""
import os
import statistics
import subprocess
import sys
import tempfile
import time

BIN, SAMPLES, RUNS, IDLE = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
TICK = os.sysconf("SC_CLK_TCK")


def make_run(root, name, pid):
    d = os.path.join(root, name)
    os.makedirs(d)
    with open(os.path.join(d, "trace.jsonl"), "w") as f:
        f.write('{"t_ms":0,"event":"run.start","stage":null,"step":0,"pid":%d,'
                '"run_id":"%s","scenario":{"name":"bench"}}\n' % (pid, name))
    return d


def finish(d):
    with open(os.path.join(d, "report.json"), "w") as f:
        f.write('{"verdict":"pass","exit_code":0,"outcome":"completed","reason":"ok"}')
    tmp = os.path.join(d, ".DONE.tmp")
    with open(tmp, "w") as f:
        f.write("pass\n")
    t = time.monotonic()
    os.rename(tmp, os.path.join(d, "DONE"))
    return t


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def main():
    holder = subprocess.Popen(["sleep", "100000"])
    root = tempfile.mkdtemp(prefix="ksr-bench-watch-")
    try:
        n = max(SAMPLES, RUNS) + 1
        dirs = [make_run(root, "r%03d" % i, holder.pid) for i in range(n)]
        w = subprocess.Popen([BIN, "watch", "--recursive", root], stdout=subprocess.PIPE,
                             text=True, bufsize=1)
        ready = 0
        while ready < n:
            line = w.stdout.readline()
            if not line:
                raise SystemExit("bench_watch: watch exited before every READY (rc %s)" % w.wait())
            ready += line.startswith("READY")
        # (2) idle CPU first, with every run live
        c0, t0 = cpu_s(w.pid), time.monotonic()
        time.sleep(IDLE)
        c1, t1 = cpu_s(w.pid), time.monotonic()
        # (1) latency, one run at a time
        lat = []
        for d in dirs[:SAMPLES]:
            t = finish(d)
            while True:
                line = w.stdout.readline()
                if not line:
                    raise SystemExit("bench_watch: watch exited early (rc %s)" % w.wait())
                if os.environ.get("BENCH_WATCH_DEBUG"):
                    sys.stderr.write(line)
                if line.startswith("EVENT terminal_pass run=%s " % os.path.basename(d)):
                    lat.append((time.monotonic() - t) * 1000)
                    break
            time.sleep(0.05)
        for d in dirs[SAMPLES:]:
            finish(d)
        w.wait(timeout=30)
        print("| measure | value |\n|---|---|")
        print("| DONE -> terminal line, median (ms), %d samples | %.2f |"
              % (len(lat), statistics.median(lat)))
        print("| DONE -> terminal line, p95 / max (ms) | %.2f / %.2f |"
              % (sorted(lat)[int(0.95 * (len(lat) - 1))], max(lat)))
        print("| watch CPU over %.0f idle s, %d live runs watched (s) | %.3f (%.3f%% of a core) |"
              % (t1 - t0, n, c1 - c0, 100 * (c1 - c0) / (t1 - t0)))
        print("| reference: a 3 s poll loop (the seed's poller base interval), mean latency | "
              "1500 ms by construction (half the interval) |")
    finally:
        holder.kill()
        holder.wait()
        subprocess.run(["rm", "-rf", root])


main()
