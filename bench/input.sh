#!/usr/bin/env bash
# Input: our in-process XTest (click, key, type per character) against xdotool
# with --delay 0, and 1000 mixed characters typed into zenity --entry by each,
# on one private Xvfb + openbox.
#   bench/input.sh [BUILD_DIR] [ACTIONS]    (needs xdotool, zenity, xterm)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
bin=$build/bench/bench_input
[ -x "$bin" ] || { echo "input.sh: $bin not built (cmake --build $build --target bench_input)" >&2; exit 2; }
for tool in xdotool zenity xterm; do
  command -v "$tool" >/dev/null || { echo "input.sh: $tool not installed" >&2; exit 2; }
done
exec "$bin" "${2:-200}"
