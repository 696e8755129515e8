#!/usr/bin/env bash
# Readiness: what the ready checks and the settle cost per step, idle and right
# after a repaint, beside the behaviour before them, on one private Xvfb +
# openbox with the GTK3 test app (bench_ready.c); then the same beside each
# other end to end: one run of the runtime with ready_quiet_ms: 50 (the
# default) and one with 0 (the waits off), per-step medians from their traces;
# then what asking the accessibility bus for the control under the point
# costs a click on an idle app (atspi: true vs false, the same clicks).
#   bench/ready.sh [BUILD_DIR] [ROUNDS]   (BUILD_DIR with tests: the test app)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
n=${2:-50}
bin=$build/bench/bench_ready
app=$build/tests/ksr-testapp
rt=$build/kasm-session-runtime
for f in "$bin" "$app" "$rt"; do
  [ -x "$f" ] || { echo "ready.sh: $f not built" >&2; exit 2; }
done
"$bin" "$n" "$app"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
steps=""
for i in $(seq 1 "$n"); do
  steps+=$'  - key: shift\n'          # idle: nothing repaints
  steps+=$'  - type: "x"\n'           # the field repaints
done
for q in 50 0; do
  cat > "$tmp/s$q.yaml" <<YAML
name: ready-bench-$q
launch: $PWD/$app --no-cursor-blink
process: ^ksr-testapp$
window: ^KSR Test App$
settle_s: 0.5
atspi: false
ready_quiet_ms: $q
steps:
  - click: [0.5, 0.47]
$steps
YAML
  "$rt" run --xvfb --out "$tmp/o$q" "$tmp/s$q.yaml" > /dev/null 2>&1 || true
done
echo
echo "end to end, the runtime's step rows ($n idle key steps and $n typing steps per run):"
echo
/usr/bin/python3 - "$tmp" <<'PY'
import json, statistics, sys
tmp = sys.argv[1]
def rows(q):
    out = []
    try:
        for line in open("%s/o%d/trace.jsonl" % (tmp, q)):
            e = json.loads(line)
            if e.get("event") == "step.end" and e.get("kind") in ("key", "type"):
                out.append(e)
    except OSError:
        pass
    return out
def med(v):
    return statistics.median(v) if v else float("nan")
on, off = rows(50), rows(0)
print("| step | phase | ready_quiet_ms: 50 | ready_quiet_ms: 0 (before) | added |")
print("|---|---|---:|---:|---:|")
for kind, what in (("key", "idle app (key: shift)"), ("type", "after a repaint (type: x)")):
    for phase, get in (("ready", lambda r: r["ready"]["waited_ms"]),
                       ("settled", lambda r: r["settled"]["waited_ms"]),
                       ("whole step", lambda r: r["duration_ms"])):
        a = med([get(r) for r in on if r["kind"] == kind])
        b = med([get(r) for r in off if r["kind"] == kind])
        print("| %s | %s | %.1f ms | %.1f ms | %+.1f ms |" % (what, phase, a, b, a - b))
        print("ROW e2e.%s.%s %.3f %.3f" % (kind, phase.replace(" ", "_"), a, b))
PY

clicks=""
for i in $(seq 1 "$n"); do
  clicks+=$'  - click: [0.5, 0.1]\n'     # the "Press me" button
done
for a in true false; do
  cat > "$tmp/c$a.yaml" <<YAML
name: ready-bench-control-$a
launch: $PWD/$app --no-cursor-blink
process: ^ksr-testapp$
window: ^KSR Test App$
settle_s: 0.5
atspi: $a
steps:
$clicks
YAML
  "$rt" run --xvfb --out "$tmp/c$a" "$tmp/c$a.yaml" > /dev/null 2>&1 || true
done
echo
echo "the control under the point ($n clicks on the test app's button, ready phase):"
echo
/usr/bin/python3 - "$tmp" <<'PY'
import json, statistics, sys
tmp = sys.argv[1]
def ready(a):
    v = []
    try:
        for line in open("%s/c%s/trace.jsonl" % (tmp, a)):
            e = json.loads(line)
            if e.get("event") == "step.end" and e.get("kind") == "click":
                v.append(e["ready"]["waited_ms"])
    except OSError:
        pass
    return statistics.median(v) if v else float("nan")
on, off = ready("true"), ready("false")
print("| click, idle app | atspi: true (control asked) | atspi: false | added |")
print("|---|---:|---:|---:|")
print("| ready phase | %.1f ms | %.1f ms | %+.1f ms |" % (on, off, on - off))
print("ROW e2e.click.control %.3f %.3f" % (on, off))
PY
