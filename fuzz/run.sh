#!/usr/bin/env bash
# Build the libFuzzer targets with clang and run each for SECONDS, from its seed
# corpus (fuzz/corpus/<name>/, never written to) plus a scratch corpus in the
# build folder that grows from run to run. Exits non-zero when a target finds a
# crash, leak, timeout or out-of-memory; the input is left in BUILD/artifacts/.
#   fuzz/run.sh [BUILD_DIR] [SECONDS]     (scripts/setup.sh test: 30 s; fuzz: longer)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-fuzz}
secs=${2:-30}
CC=clang cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKSR_FUZZ=ON \
  -DBUILD_TESTING=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target fuzz >/dev/null
mkdir -p "$build/artifacts"
status=0
for src in fuzz/fuzz_*.c; do
  name=$(basename "$src" .c)
  area=${name#fuzz_}
  mkdir -p "$build/corpus/$area"
  dict=()
  [ -f "fuzz/$area.dict" ] && dict=(-dict="fuzz/$area.dict")
  log=$build/$name.log
  if "$build/fuzz/$name" "${dict[@]}" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
      -max_len=8192 -print_final_stats=1 -artifact_prefix="$build/artifacts/$name-" \
      "$build/corpus/$area" "fuzz/corpus/$area" >"$log" 2>&1; then
    echo "fuzz: $name: $(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | grep -o '[0-9]*$') executions in ${secs}s, no finding"
  else
    echo "fuzz: $name FOUND A PROBLEM (log $log, input in $build/artifacts/):" >&2
    grep -A40 -m1 -E '^==[0-9]+==|runtime error|ERROR: libFuzzer' "$log" >&2 || tail -40 "$log" >&2
    status=1
  fi
done
exit $status
