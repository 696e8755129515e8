#!/usr/bin/env bash
# MCP round trips (screen_capture inline and by reference, input_click,
# window_list, ping) through the official SDK client over stdio and Streamable
# HTTP, beside xdotool and ImageMagick import on the same private Xvfb + openbox
# (with an xterm on it, so that there is a window to list and pixels to encode),
# and the server's RSS over 10,000 tool calls.
#   bench/mcp.sh [BUILD_DIR] [ITERATIONS]   (needs node, xdotool, imagemagick; the
#   SDK client comes from tests/integration/mcp_client: npm ci there when missing)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
n=${2:-50}
bin=$(realpath "$build/kasm-session-runtime")
[ -x "$bin" ] || { echo "mcp.sh: $bin not built" >&2; exit 2; }
[ -d tests/integration/mcp_client/node_modules ] ||
  (cd tests/integration/mcp_client && npm ci --no-audit --no-fund --loglevel=error >&2)
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 -- "-$p" 2>/dev/null || true; done; rm -rf "$tmp"; }
trap cleanup EXIT
exec 3> >(cat > "$tmp/display")
setsid Xvfb -displayfd 3 -screen 0 1920x1080x24 -nolisten tcp >/dev/null 2>&1 & pids+=($!)
exec 3>&-
for _ in $(seq 100); do [ -s "$tmp/display" ] && break; sleep 0.05; done
export DISPLAY=":$(cat "$tmp/display")"
setsid openbox >/dev/null 2>&1 & pids+=($!)
sleep 1
setsid xterm -geometry 100x30+100+100 -e sh -c 'ls -l /usr/bin | head -40; exec sleep 1000' >/dev/null 2>&1 & pids+=($!)
sleep 1
node bench/bench_mcp.mjs "$bin" "$n"
# 2026-07-28 beside 2025-11-25, and scenario_run as a task against the streamed call.
node bench/bench_mcp2026.mjs "$bin" "$n"
