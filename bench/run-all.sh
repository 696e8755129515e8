#!/usr/bin/env bash
# Every benchmark, on demand (never a timed test): our figure beside an
# established tool doing the same job in the same run, as markdown tables.
#   bench/run-all.sh [BUILD_DIR] [ITERATIONS]
# BUILD_DIR must be an optimised build without sanitizers, e.g.
#   cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build build-bench -j2
# (`scripts/setup.sh bench` does all of it). Needs imagemagick, scrot, xdotool,
# python3-pyatspi (setup.sh installs them) and odiff from npm (installed here,
# pinned by bench/package-lock.json, into bench/node_modules).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-bench}
n=${2:-15}
for b in bench_capture bench_window bench_diff bench_rss; do
  [ -x "$build/bench/$b" ] || { echo "run-all.sh: $build/bench/$b not built" >&2; exit 2; }
done
if grep -q 'KSR_SANITIZE:BOOL=ON' "$build/CMakeCache.txt"; then
  echo "run-all.sh: $build is a sanitizer build; its figures would not be representative" >&2
  exit 2
fi
odiff=bench/node_modules/@odiff/linux-x64/odiff
if [ ! -x "$odiff" ] && command -v npm >/dev/null; then
  (cd bench && npm ci --no-audit --no-fund --loglevel=error) || echo "run-all.sh: npm ci failed; odiff shows n/a" >&2
fi
for tool in import scrot compare xdotool; do
  command -v "$tool" >/dev/null || echo "run-all.sh: $tool not installed; its row shows n/a" >&2
done
export ODIFF=$PWD/$odiff

echo "# kasm-session-runtime benchmarks, $(date -u +%Y-%m-%dT%H:%MZ)"
echo
echo "machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), load $(cut -d' ' -f1-3 /proc/loadavg), $(. /etc/os-release; echo "$PRETTY_NAME"), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
echo
echo '## Full-screen capture -> PNG'
echo '```'
"$build/bench/bench_capture" "$n"
echo '```'
echo
echo '## Process start -> window detected'
"$build/bench/bench_window" "$(( n < 10 ? n : 10 ))"
echo
echo '## Baseline compare'
"$build/bench/bench_diff" "$n"
echo
echo '## Peak memory of a run'
"$build/bench/bench_rss" "$build/kasm-session-runtime" scenarios/demo-xterm.yaml
