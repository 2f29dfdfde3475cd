#!/usr/bin/env bash
# promtool, Prometheus's rule checker and rule unit tester, run with this script's arguments. On a
# machine without it, it is taken from Debian's prometheus package (the apt cache's .deb, or
# `apt-get download prometheus`) and only unpacked, with dpkg-deb, into a cache directory: no
# Prometheus service is installed or started.
set -euo pipefail

cache="${PAYONCE_PROMTOOL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/payonce-promtool}"
promtool="$cache/usr/bin/promtool"

fetch_deb() {
    local into=$1
    ( cd "$into" && { apt-get download -q prometheus >/dev/null 2>&1 \
        || { apt-get update -q >/dev/null && apt-get download -q prometheus >/dev/null; }; } ) \
        || { echo "promtool.sh: cannot download Debian's prometheus package (apt-get download prometheus)" >&2; exit 1; }
    ls "$into"/prometheus_*.deb
}

if [ ! -x "$promtool" ]; then
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    deb=$(ls /var/cache/apt/archives/prometheus_*.deb 2>/dev/null | tail -1 || true)
    [ -n "$deb" ] || deb=$(fetch_deb "$work")
    # Unpacked beside the cache and moved in whole, so that two builds starting together never run half a file.
    mkdir -p "$work/unpacked" "$(dirname "$cache")"
    dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$work/unpacked" ./usr/bin/promtool
    mkdir -p "$cache"
    mv -f "$work/unpacked/usr" "$cache/" 2>/dev/null || [ -x "$promtool" ]
fi
exec "$promtool" "$@"
