#!/usr/bin/env bash
# Builds Conduit (github.com/conduitio/conduit, Go, Apache 2.0) once into a
# cache outside the repo, from its Go module and with the Go toolchain, for
# `npm run bench -- --compare conduit` (dev/bench/conduit/conduit-relay.ts).
# Never used by the tests or CI.
#
# Idempotent and fast when present: a marker file written after a complete
# build is the only thing checked. The module and its dependencies come from
# the Go module proxy (GOPROXY) and are checked against go.sum and the checksum
# database, as any `go build` does; nothing else is downloaded.
#
# Why not `go install github.com/conduitio/conduit/cmd/conduit@VERSION`: that
# command also looks up the module's deprecation through its version list,
# which the module proxy we reach refuses for this module (403), so it fails
# before it builds anything. `go mod download` of one exact version works, and
# the build then runs inside that module's own directory, with its own go.mod
# and go.sum: the same dependency versions as `go install` would take.
#
# Prints the binary's path on stdout; progress goes to stderr.
#
# Environment:
#   OUTBOX_TAIL_CACHE_DIR        cache root (default: $HOME/.cache/outbox-tail)
#   OUTBOX_TAIL_CONDUIT_VERSION  default v0.14.0: the newest release whose module and dependencies the
#                                proxy served us (2026-12-07: v0.15.0, v0.15.1, v0.16.0, v0.16.1, v0.17.0
#                                and v0.19.0 refused; v0.18.0's .info served but its .zip refused)
#   OUTBOX_TAIL_GO               the go binary (default: go on PATH, else /usr/local/go/bin/go)
set -euo pipefail

MODULE=github.com/conduitio/conduit
VERSION="${OUTBOX_TAIL_CONDUIT_VERSION:-v0.14.0}"
CACHE_ROOT="${OUTBOX_TAIL_CACHE_DIR:-$HOME/.cache/outbox-tail}"
DIR="$CACHE_ROOT/conduit/$VERSION"
BIN="$DIR/bin/conduit"
MARKER="$DIR/.complete"

log() { printf '[fetch-conduit] %s\n' "$*" >&2; }
die() { printf '[fetch-conduit] ERROR: %s\n' "$*" >&2; exit 1; }

if [[ -f "$MARKER" && -x "$BIN" ]]; then
  printf '%s\n' "$BIN"
  exit 0
fi

mkdir -p "$CACHE_ROOT/conduit"
# Two benches building at once would write the same binary: one waits for the other.
exec 9>"$CACHE_ROOT/conduit/.lock"
flock 9
if [[ -f "$MARKER" && -x "$BIN" ]]; then
  printf '%s\n' "$BIN"
  exit 0
fi

GO="${OUTBOX_TAIL_GO:-$(command -v go || true)}"
[[ -n "$GO" ]] || GO=/usr/local/go/bin/go
[[ -x "$GO" ]] || die "no Go toolchain (set OUTBOX_TAIL_GO, or put go on PATH)"
# The machine's own Go, never a toolchain download: Conduit's go.mod names the Go it needs
# (v0.14.0: go 1.24.2), and an older local Go fails here with that message.
export GOTOOLCHAIN=local

log "downloading $MODULE@$VERSION and checking it against the checksum database"
json="$("$GO" mod download -json "$MODULE@$VERSION" 2>&1)" || die "go mod download $MODULE@$VERSION failed: $json"
src="$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
[[ -n "$src" && -f "$src/go.mod" ]] || die "go mod download gave no module directory: $json"

log "building $MODULE/cmd/conduit $VERSION with $("$GO" env GOVERSION) (its dependencies download once; a few minutes on 2 cores)"
mkdir -p "$DIR/bin"
# As Conduit's own Makefile builds it (the version through -ldflags); -mod=readonly because the module
# cache is read-only and go.sum already lists every dependency; -trimpath keeps cache paths out of the binary.
(cd "$src" && "$GO" build -mod=readonly -buildvcs=false -trimpath \
  -ldflags "-X 'github.com/conduitio/conduit/pkg/conduit.version=$VERSION'" \
  -o "$BIN.partial" ./cmd/conduit) || die "go build of $MODULE@$VERSION failed (see above)"
mv "$BIN.partial" "$BIN"
printf 'module=%s version=%s go=%s built=%s\n' "$MODULE" "$VERSION" "$("$GO" env GOVERSION)" "$(date -u +%FT%TZ)" >"$MARKER"
log "ready: $BIN ($("$BIN" --version 2>/dev/null || echo '?'))"
printf '%s\n' "$BIN"
