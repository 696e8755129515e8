#!/usr/bin/env bash
# Fetch the cJSON source that matches the installed libcjson-dev (Debian ships
# no libcjson.a), with Debian's patches applied, for a KSR_PORTABLE build:
#   packaging/fetch-cjson-source.sh DIR     -> DIR/cJSON.c, DIR/cJSON.h
# Uses apt-get source with a private source list and state folder, so the
# machine's apt configuration is not touched. Idempotent: an existing
# DIR/cJSON.c of the same version is kept.
set -euo pipefail
dest=${1:?usage: $0 DIR}
version=$(dpkg-query -W -f='${Version}' libcjson-dev)
if [ -f "$dest/cJSON.c" ] && [ "$(cat "$dest/.version" 2>/dev/null)" = "$version" ]; then
	exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/parts" "$work/lists/partial" "$work/cache/archives/partial" "$work/src"
codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
cat >"$work/parts/src.sources" <<SOURCES
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $codename $codename-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: $codename-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
apt_opts=(-o "Dir::Etc::SourceList=$work/parts/src.sources" -o "Dir::Etc::SourceParts=$work/parts"
	-o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache" -o APT::Sandbox::User=root -qq)
apt-get "${apt_opts[@]}" update
(cd "$work/src" && apt-get "${apt_opts[@]}" source "cjson=$version" >/dev/null 2>&1) || {
	echo "fetch-cjson-source: apt-get source cjson=$version failed" >&2
	exit 1
}
src=$(find "$work/src" -maxdepth 2 -name cJSON.c -printf '%h\n' | head -1)
[ -n "$src" ] || { echo "fetch-cjson-source: no cJSON.c in the source package" >&2; exit 1; }
mkdir -p "$dest"
cp "$src/cJSON.c" "$src/cJSON.h" "$src/LICENSE" "$dest/"
echo "$version" >"$dest/.version"
