#!/usr/bin/env bash
# Builds the tracing tests' OTLP receiver (dev/otelcol: the OpenTelemetry Collector's own OTLP receiver and
# OTLP/HTTP exporter, nothing else) from the Go module proxy into the cache, for
# test/integration/trace-otlp.test.ts (docs/tracing.md). No registry our machines reach ships a prebuilt
# Collector or other OTLP trace backend, so it is built from source, pinned by dev/otelcol/go.sum; CI starts this
# build in the background at the start of its run (.ci/run), off the critical path.
#
#   bin/setup-otelcol.sh            build when missing (waits for a build already running), print the binary's path
#   bin/setup-otelcol.sh --wait     start no build: wait for one already running, then print the path, or fail
#                                   when there is no binary (what the tracing test calls)
#
# Idempotent: the binary is cached under a hash of dev/otelcol's sources, so a change to them builds anew and
# an unchanged tree only prints the path. Needs Go (the version dev/otelcol/go.mod names, or newer).
# Concurrent calls are serialised on a lock beside the cache directory.
#
# Environment:
#   OUTBOX_TAIL_CACHE_DIR   cache root (default: $HOME/.cache/outbox-tail)
# Prints the binary's path on its last line.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$ROOT/dev/otelcol"
HASH="$(cat "$SRC/go.mod" "$SRC/go.sum" "$SRC/main.go" | sha256sum | cut -c1-12)"
CACHE_ROOT="${OUTBOX_TAIL_CACHE_DIR:-$HOME/.cache/outbox-tail}"
DIR="$CACHE_ROOT/otelcol-$HASH"
BIN="$DIR/otelcol"
WAIT_ONLY=false
[[ "${1:-}" == --wait ]] && WAIT_ONLY=true

log() { printf '[setup-otelcol] %s\n' "$*" >&2; }

mkdir -p "$CACHE_ROOT"
# One build at a time: a second caller (the tracing test while CI's background build runs) waits here.
exec 9>"$DIR.lock"
if ! flock -n 9; then
  log "a build of $DIR is running (lock $DIR.lock): waiting for it"
  flock 9
fi

if [[ -x "$BIN" ]]; then
  log "otelcol $HASH present"
  echo "$BIN"
  exit 0
fi
if $WAIT_ONLY; then
  log "ERROR: $BIN is missing and no build is running: run npm run setup:tools (or bin/setup-otelcol.sh) to build it"
  exit 1
fi
command -v go >/dev/null 2>&1 || { log "ERROR: go not found: install Go (the version dev/otelcol/go.mod names), e.g. apt-get install golang-go"; exit 1; }

start=$EPOCHREALTIME
mkdir -p "$DIR"
log "go build dev/otelcol (about 110 s on 2 cores with empty Go caches, most of it compiling)"
# A test tool, not a production server: unoptimised and without symbols the cold build is about a third shorter,
# and the binary runs our tests as well. -mod=readonly: go.sum pins every module; nothing is resolved anew.
(cd "$SRC" && go build -mod=readonly -trimpath -ldflags='-s -w' -gcflags='all=-N -l' -o "$BIN.tmp" .) >&2
mv "$BIN.tmp" "$BIN"
log "built in $(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0fs", b - a }')"
echo "$BIN"
