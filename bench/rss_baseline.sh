#!/usr/bin/env bash
# Peak memory of a run that compares its first look with a baseline that has
# drifted (the comparison, then the diff image): demo-xterm with a baseline
# written by `run --update-baseline`, then a red rectangle drawn over a fifth
# of it (ImageMagick), so the run reports drift and writes first-look-diff.png.
# bench_rss measures it as it measures the plain demo (VmHWM of the runtime).
#   bench/rss_baseline.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-bench}
rt=$build/kasm-session-runtime
tmp=$(mktemp -d /tmp/ksr-bench-rssb.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export KASM_RUNTIME_XVFB_SIZE=${KASM_RUNTIME_XVFB_SIZE:-1920x1080}
sed "s|^settle_s: 2|settle_s: 2\nbaseline: $tmp/base.png\nbaseline_tolerance: 0.001|" \
  scenarios/demo-xterm.yaml > "$tmp/write.yaml"
"$rt" run --xvfb --update-baseline --out "$tmp/o1" "$tmp/write.yaml" > /dev/null 2>&1 || true
[ -s "$tmp/base.png" ] || { echo "rss_baseline.sh: no baseline written" >&2; exit 1; }
convert "$tmp/base.png" -fill red -draw 'rectangle 0,0 900,500' "$tmp/drift.png"
sed "s|$tmp/base.png|$tmp/drift.png|" "$tmp/write.yaml" > "$tmp/drift.yaml"
"$build/bench/bench_rss" "$rt" "$tmp/drift.yaml"
