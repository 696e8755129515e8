#!/usr/bin/env bash
# AT-SPI: a full walk (role, name, states, actions, extents of every node) of
# mousepad (GTK3), gnome-calculator (GTK4) and featherpad (Qt 5), and
# find-and-act on a named control (ours: the find-mode walk click_element uses), by our walk (bench_atspi) and by Debian's pyatspi
# (bench/atspi_pyatspi.py under /usr/bin/python3), alternating, on the same app
# in the same session. The session is the runtime's own --xvfb one (Xvfb,
# D-Bus session bus, AT-SPI bus, openbox), held open by a scenario that sleeps.
#   bench/atspi.sh [BUILD_DIR] [RUNS]    BUILD_DIR: optimised, no sanitizers
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-bench}
runs=${2:-9}
bin=$build/bench/bench_atspi
floor=$build/bench/bench_atspi_floor
rt=$build/kasm-session-runtime
for f in "$bin" "$floor" "$rt"; do
  [ -x "$f" ] || { echo "atspi.sh: $f not built (cmake --build $build)" >&2; exit 2; }
done
if grep -q 'KSR_SANITIZE:BOOL=ON' "$build/CMakeCache.txt"; then
  echo "atspi.sh: $build is a sanitizer build; its figures would not be representative" >&2
  exit 2
fi
/usr/bin/python3 -c 'import pyatspi' 2>/dev/null || { echo "atspi.sh: python3-pyatspi missing" >&2; exit 2; }
tmp=$(mktemp -d /tmp/ksr-bench-atspi.XXXXXX)
rtpid=
# The held run ends interrupted (exit 2) on TERM: not this script's failure.
cleanup() { [ -n "$rtpid" ] && kill -TERM "$rtpid" 2>/dev/null && { wait "$rtpid" 2>/dev/null || true; }; rm -rf "$tmp"; }
trap cleanup EXIT

median() { sort -n | awk '{a[NR]=$1} END {if (NR==0) print "n/a"; else if (NR%2) printf "%.1f", a[(NR+1)/2]; else printf "%.1f", (a[NR/2]+a[NR/2+1])/2}'; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN{if (a=="n/a" || b=="n/a" || b==0) print "n/a"; else printf "%.1f×", a/b}'; }

# hold APP WINDOW PROCESS: a session with the app running; sets PID and the env.
hold() {
  [ -n "$rtpid" ] && { kill -TERM "$rtpid" 2>/dev/null; wait "$rtpid" 2>/dev/null || true; }
  printf 'launch: %s\nprocess: ^%s$\nwindow: %s\nsettle_s: 1\natspi: false\nsteps:\n  - sleep: 600\n' \
    "$1" "$3" "$2" > "$tmp/hold.yaml"
  rm -rf "$tmp/out"
  "$rt" run --xvfb --out "$tmp/out" "$tmp/hold.yaml" > "$tmp/run.log" 2>&1 &
  rtpid=$!
  for _ in $(seq 100); do
    grep -q '"steps"' "$tmp/out/trace.jsonl" 2>/dev/null && break
    sleep 0.2
  done
  # the app's PID as the run recorded it (other sessions may run the same app)
  PID=$(grep -o '"event":"app","stage":"app-wait","step":0,"pid":[0-9]*' "$tmp/out/trace.jsonl" |
        head -1 | sed 's/.*://')
  [ -n "$PID" ] || { echo "atspi.sh: $1 did not come up:" >&2; tail -5 "$tmp/run.log" >&2; exit 1; }
  export $(tr '\0' '\n' < /proc/$PID/environ | grep -E '^(DISPLAY|DBUS_SESSION_BUS_ADDRESS|XDG_RUNTIME_DIR)=')
  sleep 1  # let a GTK4 app finish registering
}

# walk APP: alternate our walk and pyatspi's, one run each at a time.
walk_row() {
  local name=$1
  local ours=$tmp/ours.$name py=$tmp/py.$name
  : > "$ours"; : > "$py"
  "$bin" walk "$PID" 1 >/dev/null  # warm-up
  for _ in $(seq "$runs"); do
    "$bin" walk "$PID" 1 >> "$ours"
    # bounded all the same (a hung libatspi must not hang the bench)
    timeout 60 /usr/bin/python3 bench/atspi_pyatspi.py walk "$PID" 1 >> "$py" || true
  done
  local o p n np
  o=$(cut -d' ' -f1 "$ours" | median); p=$(cut -d' ' -f1 "$py" | median)
  n=$(cut -d' ' -f2 "$ours" | sort -n | tail -1); np=$(cut -d' ' -f2 "$py" | sort -n | tail -1)
    echo "| full walk, $name | $n | $o | ${np:-n/a} | $p | $(ratio "$p" "$o") |"
  # The floor (bench_atspi_floor): after the walks, since it registers an
  # event listener, which makes GTK 3's bridge start its cache.
  floor_row "$name" walk "$p"
}

# floor_row APP walk PYATSPI_MS | floor_row APP find|act n/a NAME: the least the job
# asks, by bench_atspi_floor (C, every call in flight as soon as it can be).
floor_row() {
  local name=$1 job=$2 p=$3 control=${4:-} f nf nc how
  timeout 60 "$floor" "$job" "$PID" "$runs" ${control:+"$control"} > "$tmp/floor.$name" 2>&1 || true
  f=$(cut -d' ' -f1 "$tmp/floor.$name" | { grep -E '^[0-9.]+$' || true; } | median)
  nf=$(cut -d' ' -f2 "$tmp/floor.$name" | { grep -E '^[0-9]+$' || true; } | sort -n | tail -1)
  nc=$(cut -d' ' -f3 "$tmp/floor.$name" | { grep -E '^[0-9]+$' || true; } | sort -n | tail -1)
  how="one Cache.GetItems + every GetExtents/GetActions at once"
  [ "${nocache:-}" = 1 ] && how="no cache: role, name, states, interfaces, children, extents, actions per node, all in flight"
  [ "$job" = find ] && how="find \"$control\": states, name, children of every node, all in flight"
  [ "$job" = act ] && how="find \"$control\" + do action, ${GAP_MS} ms after the last: Cache.GetItems, then its GetActions, then DoAction"
  [ "$job" = findact ] && how="find \"$control\" + do action, ${GAP_MS} ms after the last, no cache: states, name, children of every node in flight, then the match's GetActions and DoAction"
  if [ "$f" = n/a ]; then
    echo "| floor, $name: n/a ($(tail -1 "$tmp/floor.$name")) | | n/a | | $p | n/a |"
  else
    echo "| floor, $name, $how (${nc:-n/a} calls) | ${nf:-n/a} | $f | | $p | $(ratio "$p" "$f") |"
  fi
}

# act_row APP CONTROL GAP_MS [WHAT]: find the control and do its action, ours
# then pyatspi's, GAP_MS apart (not timed: the app may still be busy with the
# last action's effects for a few hundred ms, which both sides pay alike).
act_row() {
  local name=$1 control=$2 gap=$3 what=${4:-}
  local ours=$tmp/act-ours py=$tmp/act-py
  GAP_MS=$gap "$bin" act "$PID" "$control" "$runs" > "$ours"
  GAP_MS=$gap timeout 120 /usr/bin/python3 bench/atspi_pyatspi.py act "$PID" "$control" "$runs" > "$py" || true
  local o p
  o=$(cut -d' ' -f1 "$ours" | median); p=$(median < "$py")
  echo "| find \"$control\" + do action, $name, ${gap} ms after the last${what:+ ($what)} | | $o | | $p | $(ratio "$p" "$o") |"
  # Its floor, measured right after: with a cache the three round trips a find +
  # act cannot do without; without one (Qt 5) the find's reads, then GetActions
  # and DoAction on the match.
  if [ "${nocache:-}" = 1 ]; then
    GAP_MS=$gap floor_row "$name" findact n/a "$control"
  else
    GAP_MS=$gap floor_row "$name" act n/a "$control"
  fi
}

echo "## AT-SPI ($(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg), median of $runs runs, ms)"
echo
echo "| job | our nodes | ours | pyatspi nodes | pyatspi | pyatspi / ours |"
echo "|---|---|---|---|---|---|"
# KSR_ATSPI_APPS="featherpad" runs the rows of some apps only.
apps=" ${KSR_ATSPI_APPS:-mousepad gnome-calculator featherpad} "
if [[ $apps == *" mousepad "* ]]; then
  hold mousepad Mousepad mousepad
  walk_row mousepad
fi
if [[ $apps == *" gnome-calculator "* ]]; then
  hold gnome-calculator Calculator gnome-calculator
  walk_row gnome-calculator
  act_row gnome-calculator "1 1" 300
  act_row gnome-calculator "1 1" 2000
fi
[[ $apps == *" featherpad "* ]] || exit 0
export QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1
hold featherpad 'Untitled|FeatherPad' featherpad
nocache=1 walk_row featherpad
nocache=1 act_row featherpad "Find" 300 "a showing toolbar button"
nocache=1 act_row featherpad "Line Numbers" 300 "a hidden menu item: every showing node is read first"
# Its floor: every node's states and name, its children, all in flight,
# below showing nodes only once the hidden match is known.
floor_row featherpad find n/a "Line Numbers"
