#!/usr/bin/env bash
# Builds Jaeger v2 (github.com/jaegertracing/jaeger cmd/jaeger: an OpenTelemetry
# Collector distribution with an OTLP receiver, in-memory storage and the query
# API) from the Go module proxy into the cache, for the tracing tests against a
# real OTLP backend (test/integration/trace-jaeger.test.ts, docs/tracing.md).
# No registry our machines reach ships a prebuilt Jaeger, OpenTelemetry Collector
# or other OTLP trace backend, so it is built from source; CI starts this build
# in the background at the start of its run (.ci/run), off the critical path.
#
#   bin/setup-jaeger.sh            build when missing (waits for a build already running), print the binary's path
#   bin/setup-jaeger.sh --wait     start no build: wait for one already running, then print the path, or fail
#                                  when there is no binary (what the tracing test calls)
#
# Idempotent: when the binary is there it only prints its path. Pinned: the module
# version below (its go.sum pins every dependency). Needs Go (>= 1.24).
# Concurrent calls are serialised on a lock beside the cache directory.
#
# Environment:
#   OUTBOX_TAIL_CACHE_DIR   cache root (default: $HOME/.cache/outbox-tail)
# Prints the binary's path on its last line.
set -euo pipefail

JAEGER_VERSION=1.75.0

CACHE_ROOT="${OUTBOX_TAIL_CACHE_DIR:-$HOME/.cache/outbox-tail}"
DIR="$CACHE_ROOT/jaeger-$JAEGER_VERSION"
BIN="$DIR/bin/jaeger"
WAIT_ONLY=false
[[ "${1:-}" == --wait ]] && WAIT_ONLY=true

log() { printf '[setup-jaeger] %s\n' "$*" >&2; }

mkdir -p "$CACHE_ROOT"
# One build at a time: a second caller (the tracing test while CI's background build runs) waits here
# instead of removing the first one's build directory.
exec 9>"$DIR.lock"
if ! flock -n 9; then
  log "a build of jaeger $JAEGER_VERSION is running (lock $DIR.lock): waiting for it"
  flock 9
fi

if [[ -x "$BIN" ]]; then
  log "jaeger $JAEGER_VERSION present"
  echo "$BIN"
  exit 0
fi
if $WAIT_ONLY; then
  log "ERROR: $BIN is missing and no build is running: run npm run setup:tools (or bin/setup-jaeger.sh) to build it"
  exit 1
fi
command -v go >/dev/null 2>&1 || { log "ERROR: go not found: install Go >= 1.24 (apt-get install golang-go, or the Go toolchain)"; exit 1; }

# `go install module@version` refuses a module whose go.mod has replace
# directives (jaeger's has): build it as a tool of a throwaway module instead.
start=$EPOCHREALTIME
build="$DIR/build"
rm -rf "$build"
mkdir -p "$build" "$DIR/bin"
cd "$build"
go mod init outbox-tail-jaeger-build >/dev/null 2>&1
log "go get -tool github.com/jaegertracing/jaeger/cmd/jaeger@v$JAEGER_VERSION"
GOFLAGS=-mod=mod go get -tool "github.com/jaegertracing/jaeger/cmd/jaeger@v$JAEGER_VERSION" >&2
log "go build (minutes on a cold Go cache)"
# A test tool, not a production server: without optimisation, inlining and symbols the cold build takes 152 s
# instead of 216 s on 2 cores (measured side by side with empty build caches), and the binary runs our tests as well.
go build -trimpath -ldflags='-s -w' -gcflags='all=-N -l' -o "$BIN.tmp" github.com/jaegertracing/jaeger/cmd/jaeger >&2
mv "$BIN.tmp" "$BIN"
rm -rf "$build"
log "built in $(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0fs", b - a }')"
echo "$BIN"
