#!/usr/bin/env bash
# Models: bytes and time to prepare a screenshot (downscale + PNG encode),
# tokens-equivalent image sizes per protocol, and the client's per-call
# overhead against the local model server (tests/integration/model_server.py),
# beside curl posting a request of the same size to the same server.
#   bench/model.sh [BUILD_DIR] [CALLS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
calls=${2:-50}
bin=$build/bench/bench_model
[ -x "$bin" ] || { echo "model.sh: $bin not built (cmake --build $build --target bench_model)" >&2; exit 2; }
command -v curl >/dev/null || { echo "model.sh: curl not installed" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'kill "$srv" 2>/dev/null || true; rm -rf "$tmp"' EXIT
echo '{"responses": {"judge": [{"answer": {"answer": "yes", "reason": "bench"}}]}}' >"$tmp/script.json"
/usr/bin/python3 tests/integration/model_server.py --script "$tmp/script.json" \
  --log "$tmp/log.jsonl" >"$tmp/port" &
srv=$!
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
port=$(head -1 "$tmp/port")
"$bin" "http://127.0.0.1:$port" "$calls"
# curl: the same server, a body of the size the runtime sends for 1280x720
# (the server checks the PNG, so send a real one: the first-look PNG of a 1x1
# would be smaller; use a base64 blob of the measured size instead).
/usr/bin/python3 - "$tmp/body.json" <<'PY'
import base64, json, struct, sys, zlib
w, h = 1280, 720
raw = b"".join(b"\x00" + bytes([230]) * (w * 3) for _ in range(h))
def chunk(t, d): return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) \
    + chunk(b"IDAT", zlib.compress(raw, 1)) + chunk(b"IEND", b"")
schema = {"type": "object", "properties": {"answer": {"type": "string"}, "reason": {"type": "string"}}}
body = {"model": "bench", "messages": [{"role": "user", "content": [
    {"type": "text", "text": "the app is visible"},
    {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(png).decode()}}]}],
    "response_format": {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}}
open(sys.argv[1], "w").write(json.dumps(body))
PY
echo
echo "| tool | calls | median ms |"
echo "|---|---|---|"
times=()
for _ in $(seq "$calls"); do
  t=$(curl -s -o /dev/null -w '%{time_total}' -H 'Content-Type: application/json' \
    --data-binary @"$tmp/body.json" "http://127.0.0.1:$port/v1/chat/completions")
  times+=("$t")
done
printf '%s\n' "${times[@]}" | sort -n | awk -v n="$calls" '{a[NR]=$1} END {printf "| curl, same body (time_total) | %d | %.2f |\n", n, a[int((NR+1)/2)]*1000}'
