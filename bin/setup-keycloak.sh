#!/usr/bin/env bash
# Provides Keycloak (a real OIDC server) in $OUTBOX_TAIL_CACHE_DIR and prints its home directory on stdout (the log
# goes to stderr). The OAUTHBEARER test gets its tokens from it: Keycloak's distribution from Maven Central
# (org.keycloak:keycloak-quarkus-dist, a zip), unpacked once. Its first `start-dev` builds the server (about a
# minute); later starts reuse that build (about 10 s).
#
# Idempotent: when the cached home has bin/kc.sh, it only prints the path.
#
# Environment:
#   OUTBOX_TAIL_CACHE_DIR   cache root (default: $HOME/.cache/outbox-tail)
#   OUTBOX_TAIL_KEYCLOAK    use this Keycloak home instead (printed as is, after a check for bin/kc.sh)
set -euo pipefail

KEYCLOAK_VERSION=26.7.3

log() { printf '[keycloak] %s\n' "$*" >&2; }
die() { printf '[keycloak] ERROR: %s\n' "$*" >&2; exit 1; }

if [[ -n "${OUTBOX_TAIL_KEYCLOAK:-}" ]]; then
  [[ -x "$OUTBOX_TAIL_KEYCLOAK/bin/kc.sh" ]] || die "OUTBOX_TAIL_KEYCLOAK=$OUTBOX_TAIL_KEYCLOAK has no bin/kc.sh"
  printf '%s\n' "$OUTBOX_TAIL_KEYCLOAK"
  exit 0
fi

CACHE_ROOT="${OUTBOX_TAIL_CACHE_DIR:-$HOME/.cache/outbox-tail}"
home="$CACHE_ROOT/keycloak-$KEYCLOAK_VERSION"
if [[ -x "$home/bin/kc.sh" && -f "$home/.complete" ]]; then
  printf '%s\n' "$home"
  exit 0
fi
command -v mvn >/dev/null || die "maven not found: run bin/setup-local-stack.sh first (it installs maven), or apt-get install maven"
started=$EPOCHREALTIME
mkdir -p "$CACHE_ROOT"
tmp=$(mktemp -d "$CACHE_ROOT/.keycloak.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mvn -q -B dependency:copy -Dartifact="org.keycloak:keycloak-quarkus-dist:$KEYCLOAK_VERSION:zip" -DoutputDirectory="$tmp" >&2 ||
  die "mvn could not fetch org.keycloak:keycloak-quarkus-dist:$KEYCLOAK_VERSION:zip from Maven Central"
unzip -q "$tmp"/keycloak-quarkus-dist-*.zip -d "$tmp/x"
rm -rf "$home"
mv "$tmp/x/keycloak-$KEYCLOAK_VERSION" "$home"
touch "$home/.complete"
log "unpacked Keycloak $KEYCLOAK_VERSION in $(awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f s", b - a }')"
printf '%s\n' "$home"
