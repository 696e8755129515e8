#!/usr/bin/env bash
# Every benchmark, on demand (never a timed test), in one command: each area's
# own output is kept in a log folder, and ONE table is printed with our figure
# beside an established tool doing the same job in the same run, and the ratio.
#   bench/run-all.sh [BUILD_DIR] [ITERATIONS] [LOG_DIR]   (LOG_DIR: bench/out/DATE)
# BUILD_DIR must be an optimised build without sanitizers, e.g.
#   cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build build-bench -j2
# (`scripts/setup.sh bench` does all of it). Needs imagemagick, scrot, xdotool,
# zenity, gnome-calculator, mousepad, chromium, firefox-esr, python3-pyatspi (setup.sh installs
# them) and, from npm (pinned, installed here into bench/node_modules), odiff and
# puppeteer-core. An area that cannot run shows n/a with the reason in its log;
# the others still run. KSR_BENCH_ONLY="capture diff" runs a subset.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-bench}
n=${2:-15}
logs=${3:-bench/out/$(date -u +%Y%m%dT%H%M%SZ)}
for b in bench_capture bench_window bench_diff bench_rss bench_activate; do
  [ -x "$build/bench/$b" ] || { echo "run-all.sh: $build/bench/$b not built" >&2; exit 2; }
done
if grep -q 'KSR_SANITIZE:BOOL=ON' "$build/CMakeCache.txt"; then
  echo "run-all.sh: $build is a sanitizer build; its figures would not be representative" >&2
  exit 2
fi
odiff=bench/node_modules/@odiff/linux-x64/odiff
if { [ ! -x "$odiff" ] || [ ! -d bench/node_modules/puppeteer-core ]; } && command -v npm >/dev/null; then
  (cd bench && npm ci --no-audit --no-fund --loglevel=error) >&2 || echo "run-all.sh: npm ci failed; odiff and puppeteer-core show n/a" >&2
fi
for tool in import scrot compare xdotool; do
  command -v "$tool" >/dev/null || echo "run-all.sh: $tool not installed; its row shows n/a" >&2
done
export ODIFF=$PWD/$odiff
mkdir -p "$logs"

# The machine first: figures on a shared machine move with its load, so the load
# is sampled before and after the whole run.
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date -u +%Y-%m-%dT%H:%MZ)

# area NAME CMD...: run one area, its stdout and stderr into LOG_DIR/NAME.txt.
area() {
  local name=$1; shift
  if [ -n "${KSR_BENCH_ONLY:-}" ] && [[ " $KSR_BENCH_ONLY " != *" $name "* ]]; then
    return 0
  fi
  echo "run-all.sh: $name ..." >&2
  local t0=$SECONDS
  local prog
  for prog in "$@"; do  # past an `env VAR=VALUE ...` prefix
    [[ $prog == env || $prog == *=* ]] || break
  done
  if [ ! -x "$prog" ]; then
    echo "n/a: $prog is not built" > "$logs/$name.txt"
  else
    "$@" > "$logs/$name.txt" 2>&1
    local rc=$?
    if [ "$rc" -ne 0 ]; then
      echo "run-all.sh: $name failed (exit $rc); see $logs/$name.txt" >&2
      echo "AREA-FAILED" >> "$logs/$name.txt"
    fi
  fi
  echo "run-all.sh: $name took $((SECONDS - t0)) s" >&2
}

area capture  "$build/bench/bench_capture" "$n"
area window   "$build/bench/bench_window" "$(( n < 10 ? n : 10 ))"
# The same two on the Kasm kind of session (Xtigervnc + xfwm4), in this run.
area capture-xvnc env KASM_RUNTIME_DISPLAY_SERVER=xvnc KASM_RUNTIME_WM=xfwm4 "$build/bench/bench_capture" "$n"
area window-xvnc  env KASM_RUNTIME_DISPLAY_SERVER=xvnc KASM_RUNTIME_WM=xfwm4 "$build/bench/bench_window" "$(( n < 10 ? n : 10 ))"
area diff     "$build/bench/bench_diff" "$n"
area rss      "$build/bench/bench_rss" "$build/kasm-session-runtime" scenarios/demo-xterm.yaml
area rss-baseline bench/rss_baseline.sh "$build"
area demo     bench/demo.sh "$build" 20
area evidence "$build/bench/bench_evidence" "$n"
area input    bench/input.sh "$build" "$(( n * 10 ))"
area cdp      bench/cdp.sh "$build" "$(( n * 2 ))"
# n runs (it was capped at 3 while pyatspi's walk of mousepad could hang until
# atspi.sh's 60 s timeout; docs/accessibility.md says why it no longer does):
# the app's speed moves between runs, and 3 made the medians move with it.
area atspi    bench/atspi.sh "$build" "$n"
area model    bench/model.sh "$build" "$(( n * 2 ))"
area watch    bench/bench_watch.sh "$build" "$(( n * 2 ))" 20 10
area ready    bench/ready.sh "$build" "$(( n * 2 ))"
area mcp      bench/mcp.sh "$build" "$(( n * 2 ))"
area proc     "$build/bench/bench_proc" "$n"
area activate "$build/bench/bench_activate" "$n"

echo "# kasm-session-runtime benchmarks"
echo
echo "- date: $started (UTC), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD 2>/dev/null || echo ' + local changes')"
echo "- machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), $(. /etc/os-release; echo "$PRETTY_NAME"), kernel $(uname -r)"
echo "- load average (1/5/15 min): $load_before before, $(cut -d' ' -f1-3 /proc/loadavg) after"
echo "- build: $build ($(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt")), $n iterations (areas scale it), every figure a median"
echo "- each area's full output: $logs/"
echo
/usr/bin/python3 - "$logs" <<'PY'
"""Reads each area's output (the formats the bench programs print) and prints
one table. ratio = theirs / ours for times and memory (above 1: we are faster
or smaller); a row that could not be read says n/a."""
import os
import re
import sys

logs = sys.argv[1]
rows = []


def read(area):
    try:
        with open(os.path.join(logs, area + ".txt"), encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def num(pattern, text, group=1):
    m = re.search(pattern, text or "", re.M)
    return float(m.group(group)) if m else None


def row(area, measure, ours, tool, theirs, unit="ms", note="", goal=None, floor_misses=False):
    """floor_misses: the row's measured floor (the least any client must do)
    itself misses the goal, so a miss is shown as below the floor."""
    rows.append((area, measure, ours, tool, theirs, unit, note, goal, floor_misses))


# The project's targets (issue 36: every goal a ratio to a floor or a peer
# measured in the same run, so that it holds on any machine; the absolute
# figures stay as information): (text, test(ours, theirs)). A test is only
# asked with both figures it needs; otherwise the row's "met" is n/a. A floor
# row itself shows "(the floor)".
def at_most(limit, unit="ms"):
    return ("<= %g %s" % (limit, unit), lambda o, t: o <= limit)


def within(times, of, name):
    """ours <= times x a figure `of` measured in the same run (a floor, or
    a peer other than the row's own tool): None when it is missing."""
    return ("<= %gx %s%s" % (times, name, "" if of is not None else " (n/a)"),
            lambda o, t: of is not None and o <= times * of)


def both_with(a, b):
    """Both goals; n/a stays n/a (a goal whose figure is missing fails)."""
    return (a[0] + " and " + b[0], lambda o, t: a[1](o, t) and b[1](o, t))


def ahead():
    return ("< theirs", lambda o, t: t is not None and o < t)


FLOOR = ("(the floor)", None)
INFO = ("(a part of the row above: information)", None)


def faster(times):
    return (">= %gx faster" % times, lambda o, t: t is not None and o > 0 and t / o >= times)


def share(of):
    # a zero beside it (a floor that measured nothing) misses rather than stops the table
    return ("<= %gx theirs" % of, lambda o, t: t is not None and t > 0 and o / t <= of)


def both(a, b):
    return (a[0] + " and " + b[0], lambda o, t: a[1](o, t) and b[1](o, t))


MIB_PER_MB = 1e6 / 1048576


def table_row(text, label_re, col):
    """A markdown table row whose first cell matches label_re: cell `col`."""
    for line in (text or "").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) > col and re.search(label_re, cells[0]):
            m = re.match(r"[-+]?\d+(\.\d+)?", cells[col])
            return float(m.group(0)) if m else None
    return None


for area, on in (("capture", ""), ("capture-xvnc", ", Xtigervnc + xfwm4")):
    t = read(area)
    if t is None:
        continue
    ours = num(r"^kasm-session-runtime \(in process\)\s+([\d.]+) ms", t)
    size = re.search(r"capture -> PNG file, (\d+x\d+)", t)
    what = "full-screen capture -> PNG file" + (" " + size.group(1) if size else "") + on
    row(area, what, ours, "ImageMagick import -window root",
        num(r"^import -window root\s+([\d.]+) ms", t), goal=faster(10))
    row(area, what, ours, "scrot", num(r"^scrot\s+([\d.]+) ms", t), goal=faster(4))

for area, on in (("window", ""), ("window-xvnc", ", Xtigervnc + xfwm4")):
    t = read(area)
    if t is None:
        continue
    for app in ("xterm", "zenity (GTK3)"):
        ours = theirs = None
        for line in t.splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) < 3 or cells[0] != app or not re.match(r"^[\d.]+$", cells[2]):
                continue
            if cells[1].startswith("map → seen by **ours**"):
                ours = float(cells[2])
            elif "xdotool search" in cells[1]:
                theirs = float(cells[2])
        row(area, "%s mapped -> window detected%s" % (app, on), ours,
            "xdotool search --sync --onlyvisible", theirs, goal=faster(50))

t = read("diff")
if t is not None:
    ours = table_row(t, r"read \+ decode both PNGs", 1)
    # Both decoded whole first: no longer the runtime's way (it streams, the
    # row below), kept for the comparison with the tools that do the same.
    row("diff", "compare two 1920x1080 PNGs (read + decode whole + diff)", ours,
        "odiff -t 0 (no diff image)", table_row(t, r"^odiff -t 0 \(native", 1), goal=share(1.2))
    row("diff", "compare two 1920x1080 PNGs (read + decode whole + diff)", ours,
        "ImageMagick compare -metric AE null:", table_row(t, r"compare -metric AE a b null:", 1),
        goal=faster(5))
    row("diff", "the runtime's first-look compare (both PNGs row by row, no frame held)",
        table_row(t, r"as the runtime", 1), "odiff -t 0 (no diff image)",
        table_row(t, r"^odiff -t 0 \(native", 1), goal=share(0.7))

t = read("rss")
if t is not None:
    ours = table_row(t, r"the process alone", 1)
    row("rss", "peak RSS of run --xvfb demo-xterm", ours, "python3 -c 'import pyatspi'",
        table_row(t, r"import pyatspi", 1), "MiB",
        "a floor, not the same job; 24 MB was the absolute goal", goal=share(2))
    # Xvfb's peak grows with the screen as our XShm segment does: the ratio
    # holds at any size.
    row("rss", "peak RSS of run --xvfb demo-xterm", ours, "its own Xvfb",
        table_row(t, r"its child `Xvfb`", 1), "MiB", goal=share(0.3))
    # Issue 23: at most one 1920x1080 RGB frame (5.93 MiB) beyond the plain run
    # (whose XShm segment is the same) when a drifted baseline is compared.
    tb = read("rss-baseline")
    if tb is not None:
        frame = 1920 * 1080 * 3 / 1048576
        row("rss", "peak RSS of run --xvfb demo-xterm with a drifted baseline (compare + diff image)",
            table_row(tb, r"the process alone", 1), "the same run without a baseline", ours,
            "MiB", goal=("<= theirs + one 1080p frame (%.2f MiB)" % frame,
                         lambda o, t: t is not None and o <= t + frame))

t = read("demo")
if t is not None:
    demo = lambda key, col: num(r"^ROW demo\.%s ([\d.]+) ([\d.]+)" % key, t, col)
    settle = num(r"^ROW demo\.settle_ms ([\d.]+)", t)
    app_start = demo("app_start", 2)
    # The floor of the whole run: the settle asked for and the app's own
    # start; the runtime's share is everything else, exec to exit.
    row("demo", "run --xvfb demo-xterm, exec to exit, worst of 20 (settle_s: 2)",
        demo("wall", 2), "settle_s + the app's start (worst)",
        settle + app_start if settle is not None and app_start is not None else None,
        note="the floor: no runtime can be faster", goal=share(1.25))
    row("demo", "the runtime's share (exec to exit less app start and settle), worst of 20",
        demo("share", 2), "settle_s", settle, goal=share(0.25))
    for key, what in (("process_start", "process start (exec -> first event)"),
                      ("session_start", "session start (X server, WM, D-Bus, AT-SPI bus)"),
                      ("own_work", "the runtime's own work (probe, first look, steps, checks)"),
                      ("app_stop", "app stop (final checks -> verdict)"),
                      ("report", "report (verdict -> DONE)"),
                      ("session_stop", "session stop (DONE -> exit)")):
        row("demo", "share, part: %s, worst of 20" % what, demo(key, 2), "settle_s", settle,
            note="information: the parts of the share", goal=INFO)
    row("demo", "runs of 20 whose app wait was over 2 s", table_row(t, r"over 2 s", 1), "-",
        None, "runs", goal=("0", lambda o, t: o == 0))

t = read("evidence")
if t is not None:
    row("evidence", "click evidence: 1280x720 screenshot + annotated copy",
        table_row(t, r"^kasm-session-runtime", 1), "import -window root + convert -draw",
        table_row(t, r"^import -window root", 1), goal=faster(5))

t = read("input")
if t is not None:
    ms = lambda label: num(r"^%s\s+([\d.]+) ms" % re.escape(label), t)
    for what, key, peer_re, peer in (
            ("click", "click", "click: xdotool click --repeat N (one process)",
             "xdotool click --repeat (one process)"),
            ("key", "key", "key: xdotool key --repeat N (one process)",
             "xdotool key --repeat (one process)"),
            ("type ASCII, per char", "type ASCII, per char", "type ASCII, per char: xdotool type --delay 0",
             "xdotool type --delay 0"),
            ("type mixed scripts, per char", "type mixed, per char",
             "type mixed, per char: xdotool type --delay 0", "xdotool type --delay 0")):
        ours = num(r"^%s: kasm-session-runtime.*?([\d.]+) ms" % re.escape(key), t)
        floor = ms(key + ": raw XTest floor")
        row("input", what + ": raw XTest floor (XTestFake* + one round trip, same run)", floor,
            "-", None, goal=FLOOR)
        row("input", what, ours, peer, ms(peer_re),
            goal=both_with(within(1.5, floor, "the floor"), ahead()))
    for what, tool_re, tool in (
            ("click", "click: xdotool click --delay 0 (a process each)", "xdotool click (a process each)"),
            ("key", "key: xdotool key --delay 0 (a process each)", "xdotool key (a process each)")):
        row("input", what, num(r"^%s: kasm-session-runtime.*?([\d.]+) ms" % what, t), tool,
            ms(tool_re), goal=faster(10))
    click_floor = ms("click: raw XTest floor")
    for label, what in (("step extra: focus check, window focused already", "a step's focus check, window focused already"),
                        ("step extra: ready round trips (viewable, ping, point)", "a step's ready round trips (viewable, ping, point)")):
        row("input", what + " (beside the input, not in it)", ms(label), "the raw click floor",
            click_floor, note="what a step adds around the input, measured apart; the "
            "activate rows carry the focus check's goal (to one round trip)",
            goal=("(information)", None))
    ok = re.search(r"^kasm-session-runtime\s+(\d+) / (\d+) arrived", t, re.M)
    xd = re.search(r"^xdotool type --delay 0\s+(\d+) / (\d+) arrived", t, re.M)
    row("input", "1000 mixed characters typed into zenity, arrived exactly",
        float(ok.group(1)) if ok else None, "xdotool type --delay 0",
        float(xd.group(1)) if xd else None, "chars", "correctness, not time",
        ("all 1000 arrive", lambda o, t: o == 1000))

t = read("cdp")
if t is not None:
    # Chromium over CDP, then Firefox ESR over WebDriver BiDi (bench_cdp
    # --firefox, its rows "ff."), each beside puppeteer-core driving the same
    # browser over the same protocol in the same run (bidi_puppeteer.mjs:
    # protocol "webDriverBiDi"); the same goals, ratios to that peer.
    for prefix, on, connect in (("", "", "CDP connect + attach"),
                                ("ff.", "Firefox (BiDi): ",
                                 "Firefox (BiDi): session.new + subscribe + context")):
        for key, theirs, what in (("connect", "connect", connect),
                                  ("click", "click", on + "page_click vs page.click (no checks)"),
                                  ("click", "locator_click",
                                   on + "page_click vs Locator.click (the same checks)"),
                                  ("type5", "type5", on + "page_type 5 chars vs page.type")):
            # The click's stability check waits two animation frames (33.3 ms
            # at 60 Hz; one frame read a glider as still, docs/cdp.md), so
            # beside page.click, which checks nothing, it is information; its
            # goal is against Locator.click, the peer doing the same checks.
            goal = {"connect": share(1.0),
                    "click": ("(information: not the same job)", None),
                    "locator_click": share(1.0), "type5": share(1.0)}.get(theirs)
            tool = "puppeteer-core" + (" over WebDriver BiDi" if prefix else "")
            row("cdp", what, num(r"^ROW ksr\.%s%s ([\d.]+)" % (re.escape(prefix), key), t),
                tool, num(r"^ROW puppeteer\.%s%s ([\d.]+)" % (re.escape(prefix), theirs), t),
                goal=goal)

def atspi_key(measure):
    """The job a row of the AT-SPI table measures, for its floor: ("walk",
    app), or ("find", app, control) and ("act", app, control, gap)."""
    m = re.match(r'^(?:floor, )?full walk, (\S+)|^floor, (\S+), (?:one|no cache)', measure)
    if m:
        return ("walk", m.group(1) or m.group(2))
    m = re.match(r'^(?:floor, (\S+), )?find "([^"]+)"(?: \+ do action, (?:(\S+), )?(\d+) ms)?',
                 measure)
    if not m:
        return None
    app = m.group(1) or m.group(3)
    return ("act", app, m.group(2), m.group(4)) if m.group(4) else ("find", app, m.group(2))


t = read("atspi")
if t is not None:
    f = lambda s: float(s) if re.match(r"^[\d.]+$", s) else None
    table = [[c.strip() for c in line.strip().strip("|").split("|")]
             for line in t.splitlines() if line.startswith("| ")]
    table = [c for c in table if len(c) == 6]
    floors = {atspi_key(c[0]): (f(c[2]), f(c[4])) for c in table if c[0].startswith("floor")}
    for cells in table:
        key = atspi_key(cells[0])
        if cells[0].startswith("floor"):
            find = key and key[0] != "walk"
            row("atspi", cells[0], f(cells[2]), "-" if find else "pyatspi (its full walk)",
                f(cells[4]), note="the least any client must ask (bench_atspi_floor); "
                "the app answers one call at a time", goal=FLOOR)
        elif key and key[0] == "walk":
            fl, py = floors.get(key, (None, None))
            row("atspi", cells[0], f(cells[2]), "pyatspi", f(cells[4]),
                goal=both_with(within(1.6, fl, "its floor"), faster(1.5)))
        elif key:
            fl = floors.get(key, floors.get(("find",) + key[1:3], (None,)))[0]
            # A showing control: within 1.2x of its floor (issue 36, item 4);
            # a hidden one (every showing node read first): 1.3x.
            hidden = "hidden" in cells[0]
            row("atspi", cells[0], f(cells[2]), "pyatspi", f(cells[4]),
                goal=within(1.3 if hidden else 1.2, fl, "its floor"))

t = read("activate")
if t is not None:
    r = lambda key: num(r"^ROW activate\.%s ([\d.]+)" % re.escape(key), t)
    for wm, session in (("openbox", "Xvfb + openbox"), ("xfwm4", "Xtigervnc + xfwm4")):
        for app in ("xterm", "zenity"):
            row("activate", "%s, %s: window already focused (a key step's cost)" % (session, app),
                r("%s.%s.stay" % (wm, app)), "one round trip (the floor of any check)",
                r("%s.%s.rt" % (wm, app)), goal=share(8))
            row("activate", "%s, %s: focus moves to the other window" % (session, app),
                r("%s.%s.move" % (wm, app)), "xdotool windowactivate --sync (a process each)",
                r("%s.%s.xdotool" % (wm, app)), "ms",
                "the WM's own activation; its fallback would be 500 ms", goal=share(1.0))

t = read("model")
if t is not None:
    row("model", "one judge call to a local server (openai protocol, per call)",
        table_row(t, r"^openai$", 2), "curl, same body", table_row(t, r"^curl, same body", 2),
        "ms", "overhead; no model latency", goal=share(2.5))

t = read("watch")
if t is not None:
    ours = table_row(t, r"DONE -> terminal line, median", 1)
    row("watch", "DONE written -> watch prints the terminal line", ours,
        "a 3 s poll loop (the seed's poller)", 1500.0 if ours is not None else None, "ms",
        "the poller's figure is half its interval, by construction", goal=faster(30))

t = read("ready")
if t is not None:
    sleep = "a sleep 0.5 between steps (the xdotool workaround)"
    row("ready", "ready checks per step, idle app", num(r"^ROW ready\.idle_added ([\d.]+)", t),
        sleep, 500.0 if "ROW ready" in t else None, "ms", "the sleep's figure is by construction",
        goal=faster(100))
    row("ready", "ready quiet wait 15 ms after a repaint", num(r"^ROW ready\.after_repaint ([\d.]+)", t),
        sleep, 500.0 if "ROW ready" in t else None, "ms", goal=faster(5))
    row("ready", "settled after typed input (DAMAGE quiet)", num(r"^ROW settle\.new ([\d.]+)", t),
        "the settle before it (window changes only)", num(r"^ROW settle\.old ([\d.]+)", t), "ms",
        "the old one did not wait for the repaint", goal=share(1.5))

t = read("proc")
if t is not None:
    m = re.search(r"^ROW proc\.big_output ([\d.]+) ([\d.]+)", t, re.M)
    row("proc", "a shell step draining 1 MB of output", float(m.group(1)) if m else None,
        "popen + read all", float(m.group(2)) if m else None, goal=share(1.5))

t = read("mcp")
if t is not None:
    r = lambda key: num(r"^ROW %s ([\d.]+)" % re.escape(key), t)
    for kind in ("stdio", "http"):
        row("mcp", "input_click over %s (SDK client round trip)" % kind, r(kind + ".click"),
            "xdotool mousemove + click (a process each)", r("xdotool.click"), goal=faster(10))
        row("mcp", "window_list over %s" % kind, r(kind + ".windows"),
            "xdotool search --onlyvisible --name .", r("xdotool.windows"), goal=faster(2))
        row("mcp", "screen_capture over %s, 1280-edge PNG inline" % kind, r(kind + ".capture"),
            "import -window root png:- (full size)", r("import.capture"), "ms",
            "not the same size: ours is downscaled", goal=faster(2))
        row("mcp", "screen_capture link + resources/read over %s, full size" % kind,
            r(kind + ".capture_link"), "import -window root png:- (full size)",
            r("import.capture"), goal=faster(2))


def fmt(v, unit):
    if v is None:
        return "n/a"
    return ("%.3g" % v if v < 10 else "%.1f" % v if v < 1000 else "%.0f" % v) + " " + unit


print("theirs / ours above 1: ours is faster (times) or smaller (memory); for the")
print("correctness row, below 1: the other tool delivered less.")
print()
print("| area | measure | ours | established tool | theirs | theirs / ours | goal | goal met | note |")
print("|---|---|---:|---|---:|---:|---|---|---|")
met_count = [0, 0, 0]
for area, measure, ours, tool, theirs, unit, note, goal, floor_misses in rows:
    failed = "AREA-FAILED" in (read(area) or "")
    ratio = "%.2f" % (theirs / ours) if ours and theirs is not None else "n/a"
    if failed and (ours is None or theirs is None):
        note = (note + "; " if note else "") + "the area failed: see its log"
    met = "-"
    if goal and goal[1] is None:  # a floor row
        pass
    elif goal:
        needs_theirs = "theirs" in goal[0] or "faster" in goal[0]
        if ours is None or (needs_theirs and theirs is None) or "(n/a)" in goal[0]:
            met = "n/a"
        else:
            met = "yes" if goal[1](ours, theirs) else "no, below its floor" if floor_misses \
                else "**no**"
            met_count[0] += met == "yes"
            met_count[1] += 1
            met_count[2] += met.startswith("no, below")
    print("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        area, measure, fmt(ours, unit), tool, fmt(theirs, unit), ratio,
        goal[0] if goal else "-", met, note))
print()
without = sum(1 for r in rows if not r[7])
print("goals met: %d of %d measured; of the rest, %d below the job's own floor "
      "(the floor row beside it misses the goal too); %d rows without a goal"
      % (tuple(met_count) + (without,)))
PY
