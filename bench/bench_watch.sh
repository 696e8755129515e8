#!/usr/bin/env bash
# watch: latency from DONE being written to `watch` printing the terminal line
# (target <= 50 ms), and watch's CPU over IDLE idle seconds with RUNS live runs
# watched. Synthetic evidence folders, a real `watch` process.
#   bench/bench_watch.sh [BUILD_DIR] [SAMPLES] [RUNS] [IDLE_S]     (defaults: build-bench 50 50 60)
# BUILD_DIR should be an optimised build without sanitizers.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-bench}
bin=$build/kasm-session-runtime
[ -x "$bin" ] || { echo "bench_watch.sh: $bin not built" >&2; exit 2; }
if grep -q 'KSR_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
  echo "bench_watch.sh: $build is a sanitizer build; figures not representative" >&2
fi
echo "## watch ($(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%MZ))"
exec /usr/bin/python3 bench/bench_watch.py "$bin" "${2:-50}" "${3:-50}" "${4:-60}"
