#!/usr/bin/env bash
# Runs one command against the private Podman engine with the local images,
# then stops the engine and removes every container, whatever the command did:
#
#   bin/with-engine.sh npx vitest run --project crash        # PostgreSQL 17
#   OUTBOX_TAIL_PG_MAJOR=18 bin/with-engine.sh npm run test:crash
#   bin/with-engine.sh --images 'relay systemd' npx vitest run --project containers  # relay image, systemd unit
#
# Before the command, the images it needs are built when missing or stale
# (bin/build-images.sh): postgres:$OUTBOX_TAIL_PG_MAJOR (default 17) and kafka,
# plus those named by --images.
#
# Sets OUTBOX_TAIL_STACK=testcontainers and the Testcontainers images
# (OUTBOX_TAIL_TC_POSTGRES_IMAGE, OUTBOX_TAIL_TC_KAFKA_IMAGE, and for
# test/containers OUTBOX_TAIL_TC_RELAY_IMAGE, OUTBOX_TAIL_TC_SYSTEMD_IMAGE)
# unless already set.
# On a machine with a Docker engine none of this is needed: Testcontainers
# finds the engine and uses the official images.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
engine="$here/container-engine.sh"
images="postgres:${OUTBOX_TAIL_PG_MAJOR:-17} kafka"
if [[ "${1:-}" == --images ]]; then
  images+=" ${2:?--images needs a list}"
  shift 2
fi
[[ $# -gt 0 ]] || { echo "usage: $0 [--images 'relay systemd'] COMMAND [ARGS...]" >&2; exit 64; }

already=0
if "$engine" status; then already=1; fi
env_lines=$("$engine" start) || exit 1
eval "$env_lines"
cleanup() {
  if [[ $already -eq 1 ]]; then
    # An engine someone else started stays up, with their containers; ours
    # (owner pid gone by now) are removed.
    local id owner
    while read -r id owner; do
      [[ -n "$id" && "$owner" =~ ^[0-9]+$ ]] || continue
      kill -0 "$owner" 2>/dev/null || "$engine" podman rm -f -t 0 "$id" >/dev/null 2>&1 || true
    done < <("$engine" podman ps -a --filter label=io.outbox-tail.stack-owner-pid \
      --format '{{.ID}} {{index .Labels "io.outbox-tail.stack-owner-pid"}}' 2>/dev/null)
  else
    "$engine" stop
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

export OUTBOX_TAIL_STACK="${OUTBOX_TAIL_STACK:-testcontainers}"
export OUTBOX_TAIL_TC_POSTGRES_IMAGE="${OUTBOX_TAIL_TC_POSTGRES_IMAGE:-localhost/outbox-tail/postgres:${OUTBOX_TAIL_PG_MAJOR:-17}}"
# Podman's Docker API would put containers on a CNI bridge (host changes):
# user-mode networking instead, ports forwarded on 127.0.0.1.
export OUTBOX_TAIL_TC_NETWORK_MODE="${OUTBOX_TAIL_TC_NETWORK_MODE:-slirp4netns}"
export OUTBOX_TAIL_TC_KAFKA_IMAGE="${OUTBOX_TAIL_TC_KAFKA_IMAGE:-localhost/outbox-tail/cp-kafka:8.1.1}"
# The containers project (test/containers): the relay image and the systemd image.
export OUTBOX_TAIL_TC_RELAY_IMAGE="${OUTBOX_TAIL_TC_RELAY_IMAGE:-localhost/outbox-tail/relay:dev}"
export OUTBOX_TAIL_TC_SYSTEMD_IMAGE="${OUTBOX_TAIL_TC_SYSTEMD_IMAGE:-localhost/outbox-tail/systemd:trixie}"
# Images given from elsewhere (a registry, a Docker machine) are not ours to build.
wanted=()
for i in $images; do
  case "$i" in
    postgres:*) [[ "$OUTBOX_TAIL_TC_POSTGRES_IMAGE" == localhost/outbox-tail/* ]] && wanted+=("$i") ;;
    kafka) [[ "$OUTBOX_TAIL_TC_KAFKA_IMAGE" == localhost/outbox-tail/* ]] && wanted+=("$i") ;;
    *) wanted+=("$i") ;;
  esac
done
if [[ ${#wanted[@]} -gt 0 ]]; then
  "$here/build-images.sh" "${wanted[@]}" || { echo "[with-engine] building the images failed: ${wanted[*]}" >&2; exit 1; }
fi
"$@"
