#!/usr/bin/env bash
# Provides promtool (Prometheus's rule checker and rule unit-test runner) in $OUTBOX_TAIL_CACHE_DIR and prints its
# path on stdout (the log goes to stderr):
#   - on Debian, from Debian's prometheus package, unpacked (not installed: installing it would start a Prometheus
#     server): apt-get download + dpkg-deb -x into promtool-debian-<version>/ (about 2 s; bookworm has 2.42.0,
#     whose `check rules` and `test rules` our rules and their unit tests pass);
#   - elsewhere, built from the pinned Prometheus Go module into promtool-<module version>/ (minutes on 2 cores:
#     docs/alerting.md has the measured time).
#
# Idempotent: when a cached binary is there and answers --version, it only prints the path (well under 1 s).
#
# Environment:
#   OUTBOX_TAIL_CACHE_DIR      cache root (default: $HOME/.cache/outbox-tail)
#   OUTBOX_TAIL_PROMTOOL       use this promtool instead (printed as is, after a --version check)
#   OUTBOX_TAIL_PROMTOOL_FROM  debian (default where apt-get exists) or go (build from the Go module)
#
# Used by test/unit/observability/prometheus-rules.test.ts; by hand: "$(bin/setup-promtool.sh)" test rules deploy/prometheus/*.test.yml
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
mkdir -p "$CACHE_ROOT"
FROM="${OUTBOX_TAIL_PROMTOOL_FROM:-$(command -v apt-get >/dev/null 2>&1 && echo debian || echo go)}"

if [[ $FROM == debian ]]; then
  for cached in "$CACHE_ROOT"/promtool-debian-*/promtool; do
    if [[ -x "$cached" ]] && "$cached" --version >/dev/null 2>&1; then
      printf '%s\n' "$cached"
      exit 0
    fi
  done
  started=$EPOCHREALTIME
  candidate() { apt-cache policy prometheus 2>/dev/null | awk '/Candidate:/ { print $2 }'; }
  version=$(candidate)
  if [[ -z "$version" || "$version" == '(none)' ]] && [[ $(id -u) -eq 0 ]]; then
    log "no prometheus package in apt's lists: apt-get update"
    apt-get update -qq >&2 || true
    version=$(candidate)
  fi
  [[ -n "$version" && "$version" != '(none)' ]] ||
    die "Debian's prometheus package is not in apt's lists (run apt-get update as root), or use OUTBOX_TAIL_PROMTOOL_FROM=go to build promtool with Go"
  tmp=$(mktemp -d "$CACHE_ROOT/.promtool-deb.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  # As root apt-get downloads as its sandbox user, who cannot write our temporary directory: download as root.
  (cd "$tmp" && apt-get download -q -o APT::Sandbox::User=root "prometheus=$version" >"$tmp/download.log" 2>&1) ||
    { cat "$tmp/download.log" >&2; die "apt-get download prometheus=$version failed (log above)"; }
  dpkg-deb -x "$tmp"/prometheus_*.deb "$tmp/x"
  "$tmp/x/usr/bin/promtool" --version >/dev/null 2>&1 || die "the promtool of Debian's prometheus $version does not run"
  dir="$CACHE_ROOT/promtool-debian-${version//[^A-Za-z0-9.+-]/_}"
  mkdir -p "$dir"
  mv "$tmp/x/usr/bin/promtool" "$dir/promtool.tmp" && mv "$dir/promtool.tmp" "$dir/promtool"
  log "unpacked promtool from Debian's prometheus $version in $(awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f s", b - a }')"
  printf '%s\n' "$dir/promtool"
  exit 0
fi
[[ $FROM == go ]] || die "OUTBOX_TAIL_PROMTOOL_FROM=$FROM: expected debian or go"

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
