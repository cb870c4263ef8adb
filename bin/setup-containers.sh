#!/usr/bin/env bash
# The container half of `npm run setup`: on a machine without a Docker engine,
# installs Podman from Debian's packages for the private engine
# (bin/container-engine.sh). The local images are not built here: each one is
# built the first time a command run through bin/with-engine.sh needs it
# (bin/build-images.sh), so the demo and `npm test`, which run on the native
# stack, never wait for them. Idempotent; a few seconds when all is present.
#
#   OUTBOX_TAIL_SETUP_CONTAINERS=0   skip all of it (native stack only)
#
# Where a Docker engine answers (a laptop), Testcontainers uses it with the
# official images and nothing is installed here.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[setup] %s\n' "$*"; }
die() { printf '[setup] ERROR: %s\n' "$*" >&2; exit 1; }
t0=$EPOCHREALTIME
elapsed() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1fs", b - a }'; }

if [[ "${OUTBOX_TAIL_SETUP_CONTAINERS:-1}" == 0 ]]; then
  log "containers skipped (OUTBOX_TAIL_SETUP_CONTAINERS=0)"
  exit 0
fi
if [[ -z "${OUTBOX_TAIL_CONTAINER_ENGINE:-}" ]] && command -v docker >/dev/null 2>&1 && timeout 5 docker info >/dev/null 2>&1; then
  log "a Docker engine answers: Testcontainers will use it with the official images (no local images needed)"
  exit 0
fi

packages=(podman debootstrap slirp4netns catatonit)
missing=()
for p in "${packages[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p"); done
if [[ ${#missing[@]} -gt 0 ]]; then
  [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null || die "container engine packages missing (${missing[*]}): run 'npm run setup' as root, or install them, or set OUTBOX_TAIL_SETUP_CONTAINERS=0 for the native stack only"
  log "apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -q --no-install-recommends "${missing[@]}" >/tmp/outbox-tail-apt-containers.log 2>&1; then
    apt-get update -q >>/tmp/outbox-tail-apt-containers.log 2>&1 || true
    apt-get install -y -q --no-install-recommends "${missing[@]}" >>/tmp/outbox-tail-apt-containers.log 2>&1 \
      || { tail -n 20 /tmp/outbox-tail-apt-containers.log >&2; die "apt-get install ${missing[*]} failed"; }
  fi
fi
# The package enables a socket on /run/podman/podman.sock for systemd. Where
# systemd runs, keep it off: our engine listens only on its private socket.
if command -v systemctl >/dev/null 2>&1; then
  systemctl disable --now podman.socket podman.service >/dev/null 2>&1 || true
fi
rm -f /etc/systemd/system/sockets.target.wants/podman.socket
log "podman present: $(podman --version) ($(elapsed "$t0")); images are built when a command through bin/with-engine.sh needs them"
