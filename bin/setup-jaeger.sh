#!/usr/bin/env bash
# Builds Jaeger v2 (github.com/jaegertracing/jaeger cmd/jaeger: an OpenTelemetry
# Collector distribution with an OTLP receiver, in-memory storage and the query
# API) from the Go module proxy into the cache, for the tracing tests against a
# real OTLP backend (test/integration/trace-jaeger.test.ts, docs/tracing.md).
#
# Idempotent: when the binary is there it only prints its path. Pinned: the module
# version below (its go.sum pins every dependency). Needs Go (>= 1.24).
#
# Environment:
#   OUTBOX_TAIL_CACHE_DIR   cache root (default: $HOME/.cache/outbox-tail)
# Prints the binary's path on its last line.
set -euo pipefail

JAEGER_VERSION=1.75.0

CACHE_ROOT="${OUTBOX_TAIL_CACHE_DIR:-$HOME/.cache/outbox-tail}"
DIR="$CACHE_ROOT/jaeger-$JAEGER_VERSION"
BIN="$DIR/bin/jaeger"

log() { printf '[setup-jaeger] %s\n' "$*" >&2; }

if [[ -x "$BIN" ]]; then
  log "jaeger $JAEGER_VERSION present"
  echo "$BIN"
  exit 0
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
