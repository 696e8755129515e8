#!/usr/bin/env bash
# The Save As flow (tests/integration/test_dialog_flow.py's scenario, without
# its state: check) N times with readiness on (ready_quiet_ms 50, the default)
# and off (ready_quiet_ms 0: the behaviour before), on the runtime's own --xvfb
# session: how many runs pass, and the median run time. Then the test app's
# "Name It" dialog, whose OK turns sensitive 500 ms after the name has text, with
# a declared click on OK right after typing (the control under the point is
# what readiness waits for). A benchmark, never a test.
#   bench/dialog_flow.sh [BUILD_DIR] [N]
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-bench}
app=${KSR_TESTAPP:-build/tests/ksr-testapp}
n=${2:-20}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flow() { # $1 = ready_quiet_ms
  cat <<YAML
name: save-as-flow
launch: exec mousepad
process: ^mousepad$
window: Mousepad$
launch_timeout_s: 60
settle_s: 1
ready_quiet_ms: $1
steps:
  - type: "hello from the dialog flow\n"
  - key: ctrl+s
    checks:
      - window: ^Save As$
        timeout_s: 15
  - key: ctrl+a
  - type: $tmp/saved.txt
  - key: Return
    checks:
      - no_window: ^Save As$
        timeout_s: 5
      - file: $tmp/saved.txt
        timeout_s: 5
YAML
}
# One table row per readiness setting: $1 = the function writing the scenario.
measure() {
  for q in 0 50; do
    "$1" "$q" > "$tmp/flow.yaml"
    pass=0 times=()
    for i in $(seq "$n"); do
      rm -f "$tmp/saved.txt"
      start=$(date +%s.%N)
      KASM_RUNTIME_OUT="$tmp/out" "$build/kasm-session-runtime" run --xvfb "$tmp/flow.yaml" >/dev/null 2>&1 && pass=$((pass + 1))
      times+=("$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')")
    done
    med=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}')
    echo "| ready_quiet_ms $q $( [ "$q" = 0 ] && echo '(off: as before)' || echo '(on)') | $n | $pass | $med |"
  done
}
echo "| Save As flow (mousepad) | runs | passed | median run (s) |"
echo "|---|---:|---:|---:|"
measure flow

name_flow() { # $1 = ready_quiet_ms
  cat <<YAML
name: name-dialog-flow
launch: $PWD/$app --name-dialog 500 --no-cursor-blink
process: ^ksr-testapp$
window: ^KSR Test App$
settle_s: 0.5
steps:
  - type: "hello"
  - click: [0.5, 0.75]
    ready_quiet_ms: $1
    checks:
      - no_window: ^Name It$
        timeout_s: 1
YAML
}
echo
echo "| Name It dialog, declared click on OK | runs | passed | median run (s) |"
echo "|---|---:|---:|---:|"
[ -x "$app" ] || { echo "dialog_flow.sh: $app not built (KSR_TESTAPP)" >&2; exit 2; }
measure name_flow
