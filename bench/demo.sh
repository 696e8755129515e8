#!/usr/bin/env bash
# The demo's time to verdict, started N times in a row (issue 23's row):
# `run --xvfb scenarios/demo-xterm.yaml` (settle_s: 2) at the runtime's default
# size. From each report.json: the time to verdict (the end of the final checks,
# from the run's start), the app wait (the app's own start is in it), and the
# runtime's own share: the verdict time less the settle stage and the app wait.
# The process's wall time (its teardown included) is printed beside. A run
# whose app wait is over 2 s is counted: the stall this row once had was 5 s.
#   bench/demo.sh [BUILD_DIR] [N]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-bench}
n=${2:-20}
rt=$build/kasm-session-runtime
[ -x "$rt" ] || { echo "demo.sh: $rt not built" >&2; exit 2; }
tmp=$(mktemp -d /tmp/ksr-bench-demo.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
for i in $(seq "$n"); do
  t0=$(date +%s%N)
  "$rt" run --xvfb --out "$tmp/o$i" scenarios/demo-xterm.yaml > /dev/null 2>&1 || true
  echo $(( ($(date +%s%N) - t0) / 1000000 )) > "$tmp/o$i/wall_ms"
done
/usr/bin/python3 - "$tmp" "$n" <<'PY'
import json, os, sys
tmp, n = sys.argv[1], int(sys.argv[2])
verdict, share, wait, wall, bad = [], [], [], [], []
for i in range(1, n + 1):
    d = os.path.join(tmp, "o%d" % i)
    r = json.load(open(os.path.join(d, "report.json")))
    st = {s["name"]: s for s in r["stages"]}
    end = st["final-checks"]["start_ms"] + st["final-checks"]["duration_ms"]
    verdict.append(end)
    wait.append(st["app-wait"]["duration_ms"])
    share.append(end - st["settle"]["duration_ms"] - st["app-wait"]["duration_ms"])
    wall.append(int(open(os.path.join(d, "wall_ms")).read()))
    if r["verdict"] != "pass":
        bad.append("%d: %s" % (i, r["verdict"]))
med = lambda xs: sorted(xs)[len(xs) // 2] if len(xs) % 2 else sum(sorted(xs)[len(xs) // 2 - 1:len(xs) // 2 + 1]) / 2
print("## demo-xterm, %d runs in a row (run --xvfb, settle_s: 2)" % n)
print()
print("| measure | median | max | runs |")
print("|---|---:|---:|---:|")
print("| time to verdict (end of the final checks) | %.0f ms | %.0f ms | %d |" % (med(verdict), max(verdict), n))
print("| the runtime's own share (verdict less settle and app wait) | %.0f ms | %.0f ms | %d |" % (med(share), max(share), n))
print("| app wait (the app's start in it) | %.0f ms | %.0f ms | %d |" % (med(wait), max(wait), n))
print("| process wall time (teardown included) | %.0f ms | %.0f ms | %d |" % (med(wall), max(wall), n))
print("| runs whose app wait was over 2 s | %d | | %d |" % (sum(1 for w in wait if w > 2000), n))
print("| runs that did not pass | %d | | %d |" % (len(bad), n))
for b in bad:
    print("not passed: " + b)
PY
