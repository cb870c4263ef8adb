#!/usr/bin/env bash
# Provides kcat (librdkafka's command-line client) in $OUTBOX_TAIL_CACHE_DIR and prints the path of a wrapper that
# runs it on stdout (the log goes to stderr). The compression tests read the relay's records back with it: a second
# Kafka client, in C, besides Kafka's own Java consumer.
#   - Debian's kcat and librdkafka1 packages, unpacked (not installed): apt-get download + dpkg-deb -x into
#     kcat-debian-<version>/, with a wrapper that puts their libraries on LD_LIBRARY_PATH (about 2 s; the other
#     libraries they need, libyajl2, liblz4-1, libzstd1, libssl3, libsasl2-2, are in Debian's base).
#
# Idempotent: when the cached wrapper answers -V, it only prints the path.
#
# Environment:
#   OUTBOX_TAIL_CACHE_DIR   cache root (default: $HOME/.cache/outbox-tail)
#   OUTBOX_TAIL_KCAT        use this kcat instead (printed as is, after a -V check)
set -euo pipefail

log() { printf '[kcat] %s\n' "$*" >&2; }
die() { printf '[kcat] ERROR: %s\n' "$*" >&2; exit 1; }

if [[ -n "${OUTBOX_TAIL_KCAT:-}" ]]; then
  "$OUTBOX_TAIL_KCAT" -V >/dev/null 2>&1 || die "OUTBOX_TAIL_KCAT=$OUTBOX_TAIL_KCAT does not run (-V failed)"
  printf '%s\n' "$OUTBOX_TAIL_KCAT"
  exit 0
fi
command -v kcat >/dev/null 2>&1 && { command -v kcat; exit 0; }

CACHE_ROOT="${OUTBOX_TAIL_CACHE_DIR:-$HOME/.cache/outbox-tail}"
mkdir -p "$CACHE_ROOT"
for cached in "$CACHE_ROOT"/kcat-debian-*/kcat; do
  if [[ -x "$cached" ]] && "$cached" -V >/dev/null 2>&1; then
    printf '%s\n' "$cached"
    exit 0
  fi
done
command -v apt-get >/dev/null 2>&1 || die "no apt-get: install kcat (https://github.com/edenhill/kcat) and set OUTBOX_TAIL_KCAT"

started=$EPOCHREALTIME
candidate() { apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ { print $2 }'; }
version=$(candidate kcat)
if [[ -z "$version" || "$version" == '(none)' ]] && [[ $(id -u) -eq 0 ]]; then
  log "no kcat package in apt's lists: apt-get update"
  apt-get update -qq >&2 || true
  version=$(candidate kcat)
fi
[[ -n "$version" && "$version" != '(none)' ]] || die "Debian's kcat package is not in apt's lists (run apt-get update as root), or set OUTBOX_TAIL_KCAT"
tmp=$(mktemp -d "$CACHE_ROOT/.kcat-deb.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# As root apt-get downloads as its sandbox user, who cannot write our temporary directory: download as root.
(cd "$tmp" && apt-get download -q -o APT::Sandbox::User=root kcat librdkafka1 >"$tmp/download.log" 2>&1) ||
  { cat "$tmp/download.log" >&2; die "apt-get download kcat librdkafka1 failed (log above)"; }
for deb in "$tmp"/*.deb; do dpkg-deb -x "$deb" "$tmp/x"; done
dir="$CACHE_ROOT/kcat-debian-${version//[^A-Za-z0-9.+-]/_}"
rm -rf "$dir" && mkdir -p "$dir"
mv "$tmp/x/usr/bin/kcat" "$dir/kcat.bin"
mv "$tmp/x/usr/lib/"*-linux-gnu* "$dir/lib"
cat >"$dir/kcat.tmp" <<'WRAPPER'
#!/bin/sh
here=$(dirname "$(readlink -f "$0")")
LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$here/kcat.bin" "$@"
WRAPPER
chmod +x "$dir/kcat.tmp"
"$dir/kcat.tmp" -V >/dev/null 2>&1 || die "the kcat of Debian's kcat $version does not run"
mv "$dir/kcat.tmp" "$dir/kcat"
log "unpacked kcat $version (and librdkafka1) in $(awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f s", b - a }')"
printf '%s\n' "$dir/kcat"
