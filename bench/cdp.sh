#!/usr/bin/env bash
# The page rung (rung 0): connect time, page_click and page_type (with the
# actionability checks) against puppeteer-core's connect, page.click and
# page.type, on one Chromium over CDP and then one Firefox ESR over
# WebDriver BiDi, each under the same private Xvfb, same page, same run.
#   bench/cdp.sh [BUILD_DIR] [ITERATIONS]   (needs chromium, firefox-esr, Xvfb, node;
#   installs puppeteer-core, pinned in bench/package-lock.json, with `npm ci` when missing)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
n=${2:-50}
bin=$build/bench/bench_cdp
[ -x "$bin" ] || { echo "cdp.sh: $bin not built (cmake --build $build --target bench_cdp)" >&2; exit 2; }
if [ ! -d bench/node_modules/puppeteer-core ]; then
  (cd bench && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 -- "-$p" 2>/dev/null || true; done; rm -rf "$tmp"; }
trap cleanup EXIT

exec 3> >(cat > "$tmp/display")
setsid Xvfb -displayfd 3 -screen 0 1280x720x24 -nolisten tcp >/dev/null 2>&1 & pids+=($!)
exec 3>&-
for _ in $(seq 100); do [ -s "$tmp/display" ] && break; sleep 0.05; done
display=":$(cat "$tmp/display")"
setsid python3 -u -m http.server --bind 127.0.0.1 --directory tests/integration/pages 0 \
  > "$tmp/http" 2>/dev/null & pids+=($!)
for _ in $(seq 100); do grep -q port "$tmp/http" 2>/dev/null && break; sleep 0.05; done
hport=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$tmp/http" | head -1)
url="http://127.0.0.1:$hport/bench.html"
DISPLAY=$display setsid chromium --user-data-dir="$tmp/profile" --remote-debugging-port=0 \
  --no-first-run --no-default-browser-check --disable-background-networking \
  --disable-component-update --disable-sync --disable-gpu --no-sandbox "$url" \
  >/dev/null 2>&1 & pids+=($!)
for _ in $(seq 200); do [ -s "$tmp/profile/DevToolsActivePort" ] && break; sleep 0.05; done
port=$(head -1 "$tmp/profile/DevToolsActivePort")

"$bin" "$port" "$url" "$n" | tee "$tmp/ksr"
node bench/cdp_puppeteer.mjs "$port" "$url" "$n" | tee "$tmp/pup"

# Firefox: a fresh profile whose first-run pages stay away, port 0 (the
# real one is read from WebDriverBiDiServer.json once it is open).
mkdir -p "$tmp/ff"
printf '%s\n' 'user_pref("browser.aboutwelcome.enabled", false);' \
  'user_pref("browser.shell.checkDefaultBrowser", false);' \
  'user_pref("browser.startup.homepage_override.mstone", "ignore");' \
  'user_pref("datareporting.policy.dataSubmissionEnabled", false);' \
  'user_pref("app.update.auto", false);' > "$tmp/ff/user.js"
DISPLAY=$display setsid firefox-esr --profile "$tmp/ff" --no-remote --remote-debugging-port 0 \
  "$url" >/dev/null 2>&1 & pids+=($!)
for _ in $(seq 400); do [ -s "$tmp/ff/WebDriverBiDiServer.json" ] && break; sleep 0.05; done
fport=$(sed -n 's/.*"ws_port": *\([0-9]*\).*/\1/p' "$tmp/ff/WebDriverBiDiServer.json")
"$bin" --firefox "$fport" "$url" "$n" | tee -a "$tmp/ksr"
node bench/bidi_puppeteer.mjs "$fport" "$url" "$n" | tee -a "$tmp/pup"

med() { awk -v k="$1" '$1=="ROW" && $2==k {print $3}' "$tmp/ksr" "$tmp/pup"; }
echo
echo "| figure (ms, median of $n) | ksr | puppeteer-core | ratio |"
echo "|---|---|---|---|"
for browser in "" ff.; do
  name="Chromium (CDP)"; [ -n "$browser" ] && name="Firefox (BiDi)"
  for f in connect click click:locator_click type5; do
    a=$(med "ksr.$browser${f%%:*}"); b=$(med "puppeteer.$browser${f##*:}")
    label=${f/click:locator_click/click vs Locator.click (the same checks)}
    echo "| $name: $label | $a | $b | $(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.2f", a/b}') |"
  done
done
