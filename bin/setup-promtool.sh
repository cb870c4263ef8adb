#!/usr/bin/env bash
# Builds promtool (Prometheus's rule checker and rule unit-test runner) from the pinned Prometheus Go module, once,
# into $OUTBOX_TAIL_CACHE_DIR/promtool-<version>/promtool, and prints that path on stdout (the log goes to stderr).
#
# Idempotent: when the binary is there and answers --version, it only prints the path (well under 1 s).
# Needs the Go toolchain (`go`, 1.24+) and the Go module proxy; the first build downloads Prometheus's modules
# into Go's module cache and compiles them (minutes on 2 cores: docs/alerting.md has the measured time).
#
# Environment:
#   OUTBOX_TAIL_CACHE_DIR      cache root (default: $HOME/.cache/outbox-tail)
#   OUTBOX_TAIL_PROMTOOL       use this promtool instead of building one (printed as is, after a --version check)
#
# Used by test/unit/prometheus-rules.test.ts; by hand: "$(bin/setup-promtool.sh)" test rules deploy/prometheus/*.test.yml
set -euo pipefail

# Prometheus 3.16.0: the Go module versions Prometheus v3.X.Y as v0.3XX.Y.
PROMETHEUS_MODULE_VERSION=v0.316.0

log() { printf '[promtool] %s\n' "$*" >&2; }
die() { printf '[promtool] ERROR: %s\n' "$*" >&2; exit 1; }

if [[ -n "${OUTBOX_TAIL_PROMTOOL:-}" ]]; then
  "$OUTBOX_TAIL_PROMTOOL" --version >/dev/null 2>&1 || die "OUTBOX_TAIL_PROMTOOL=$OUTBOX_TAIL_PROMTOOL does not run (--version failed)"
  printf '%s\n' "$OUTBOX_TAIL_PROMTOOL"
  exit 0
fi

CACHE_ROOT="${OUTBOX_TAIL_CACHE_DIR:-$HOME/.cache/outbox-tail}"
dir="$CACHE_ROOT/promtool-$PROMETHEUS_MODULE_VERSION"
bin="$dir/promtool"

if [[ -x "$bin" ]] && "$bin" --version >/dev/null 2>&1; then
  printf '%s\n' "$bin"
  exit 0
fi

command -v go >/dev/null 2>&1 || die "the Go toolchain (go) is not on PATH: install Go 1.24+ (Debian: golang-go, or the go.dev tarball), or point OUTBOX_TAIL_PROMTOOL at a promtool"

started=$EPOCHREALTIME
log "building github.com/prometheus/prometheus/cmd/promtool@$PROMETHEUS_MODULE_VERSION with $(go version) (once; cached in $dir)"
# Build into a temporary directory and move the binary in place last, so an interrupted build never leaves a
# half-written promtool that the check above would take for a good one.
tmp=$(mktemp -d "$CACHE_ROOT/.promtool-build.XXXXXX" 2>/dev/null || { mkdir -p "$CACHE_ROOT" && mktemp -d "$CACHE_ROOT/.promtool-build.XXXXXX"; })
trap 'rm -rf "$tmp"' EXIT
# GOTOOLCHAIN=local: never download another Go toolchain (go.mod's toolchain line), use the one installed.
# -tags remove_all_sd: leave out the cloud service discoveries (AWS, Azure, GCE, OCI, ...; Prometheus's own build tag),
# which only `promtool check config` uses; `check rules` and `test rules` are the same without them, and the first
# build compiles far fewer packages.
# Unoptimised and without symbols, as bin/setup-jaeger.sh builds Jaeger: a cold build ~30% shorter, for a test tool.
if ! GOBIN="$tmp" GOTOOLCHAIN=local CGO_ENABLED=0 go install -trimpath -ldflags='-s -w' -gcflags='all=-N -l' -tags remove_all_sd "github.com/prometheus/prometheus/cmd/promtool@$PROMETHEUS_MODULE_VERSION" >"$tmp/build.log" 2>&1; then
  tail -n 30 "$tmp/build.log" >&2
  die "go install of promtool $PROMETHEUS_MODULE_VERSION failed (log above)"
fi
"$tmp/promtool" --version >/dev/null 2>&1 || die "the promtool just built does not run"
mkdir -p "$dir"
mv "$tmp/promtool" "$bin"
log "built $("$bin" --version 2>&1 | head -n 1) in $(awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f s", b - a }')"
printf '%s\n' "$bin"
