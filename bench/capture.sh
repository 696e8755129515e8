#!/usr/bin/env bash
# Full-screen capture -> PNG: our in-process XShm + libpng against
# `import -window root` (ImageMagick) and `scrot`, on one private Xvfb.
#   bench/capture.sh [BUILD_DIR] [ITERATIONS]    (needs imagemagick, scrot)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
bin=$build/bench/bench_capture
[ -x "$bin" ] || { echo "capture.sh: $bin not built (cmake --build $build --target bench_capture)" >&2; exit 2; }
for tool in import scrot; do
  command -v "$tool" >/dev/null || echo "capture.sh: $tool not installed; its row shows n/a" >&2
done
exec "$bin" "${2:-15}"
