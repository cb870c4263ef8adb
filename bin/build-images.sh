#!/usr/bin/env bash
# Builds, once, the local container images the Testcontainers stack, the relay
# image test and the systemd test use on machines with no container registry.
# Each image is built only when the engine does not have it yet (a rebuild:
# `bin/build-images.sh --force NAME`), so a second run takes a few seconds.
#
#   localhost/outbox-tail/debian:{bookworm,trixie,forky}   debootstrap minbase, imported
#   localhost/outbox-tail/postgres:{15,17,18}             Debian's postgresql-NN, official-image entrypoint contract
#   localhost/outbox-tail/cp-kafka:8.1.1                  Apache Kafka jars with the cp-kafka contract
#   localhost/outbox-tail/node:20                         trixie + Debian's nodejs 20 + npm, user node (1000)
#   localhost/outbox-tail/relay:dev                       docker/Dockerfile with NODE_IMAGE=localhost/outbox-tail/node:20
#   localhost/outbox-tail/systemd:trixie                  node image + systemd as PID 1 + the relay package in /opt/outbox-tail (the unit file test)
#
# Needs the private engine (bin/container-engine.sh start; this script starts
# and stops it when it is not running) and, for the bases, debootstrap (root).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD

CACHE_ROOT="${OUTBOX_TAIL_CACHE_DIR:-$HOME/.cache/outbox-tail}"
ENGINE_DIR="$CACHE_ROOT/containers"
MIRROR="${OUTBOX_TAIL_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
# The Kafka jars the native stack uses (bin/setup-local-stack.sh) go into the image.
KAFKA_VERSION=4.1.1
# KafkaContainer reads the tag as a Confluent Platform version (>= 8 means KRaft);
# cp-kafka 8.1.x ships Apache Kafka 4.1.x.
KAFKA_TAG=8.1.1
PG_MAJORS="${OUTBOX_TAIL_PG_MAJORS:-15 17 18}"

force=()
[[ "${1:-}" == "--force" ]] && { shift; force=("$@"); }

log() { printf '[images] %s\n' "$*"; }
die() { printf '[images] ERROR: %s\n' "$*" >&2; exit 1; }
elapsed() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1fs", b - a }'; }

engine=bin/container-engine.sh
started_engine=0
if ! $engine status; then
  eval "$($engine start)"
  started_engine=1
fi
trap '[[ $started_engine -eq 1 ]] && $engine stop' EXIT
pm() { $engine podman "$@"; }

has_image() {
  local name=$1 f
  for f in "${force[@]:-}"; do [[ -n "$f" && "$name" == *"$f"* ]] && return 1; done
  pm image exists "$name"
}

# Base images straight from Debian's archive: no registry anywhere.
suite_script() {
  # bookworm's debootstrap has no script for forky yet; sid's works for it.
  if [[ -e "/usr/share/debootstrap/scripts/$1" ]]; then echo "/usr/share/debootstrap/scripts/$1"; else echo /usr/share/debootstrap/scripts/sid; fi
}
build_base() {
  local suite=$1 name="localhost/outbox-tail/debian:$1"
  has_image "$name" && { log "$name present"; return; }
  command -v debootstrap >/dev/null || die "debootstrap is missing: run 'npm run setup' as root"
  local t=$EPOCHREALTIME dir="$ENGINE_DIR/rootfs/$suite"
  rm -rf "$dir"
  mkdir -p "$dir"
  log "debootstrap $suite (minbase) into $dir"
  debootstrap --variant=minbase "$suite" "$dir" "$MIRROR" "$(suite_script "$suite")" >"$ENGINE_DIR/debootstrap-$suite.log" 2>&1 \
    || { tail -n 20 "$ENGINE_DIR/debootstrap-$suite.log" >&2; die "debootstrap $suite failed (log: $ENGINE_DIR/debootstrap-$suite.log)"; }
  # Testing's Release files can be past Valid-Until when the mirror lags; the
  # archive signature is still checked.
  echo 'Acquire::Check-Valid-Until "false";' >"$dir/etc/apt/apt.conf.d/99outbox-tail-no-valid-until"
  # Smaller images: no docs, no man pages, no recommends.
  printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' >"$dir/etc/apt/apt.conf.d/99outbox-tail-no-recommends"
  rm -rf "$dir/var/cache/apt/archives/"*.deb "$dir/var/lib/apt/lists/"*
  tar -C "$dir" -c . | pm import --change 'CMD ["/bin/bash"]' - "$name" >/dev/null
  rm -rf "$dir"
  log "$name built ($(elapsed "$t"))"
}

build() {
  # build NAME CONTEXT CONTAINERFILE [--build-arg ...]
  local name=$1 context=$2 file=$3
  shift 3
  has_image "$name" && { log "$name present"; return; }
  local t=$EPOCHREALTIME logf="$ENGINE_DIR/build-${name//[\/:]/_}.log"
  log "building $name"
  # --network host: RUN apt-get reaches Debian's mirror without a CNI bridge.
  # --format docker keeps HEALTHCHECK and STOPSIGNAL (OCI drops HEALTHCHECK).
  pm build --network host --format docker --pull=never -t "$name" -f "$file" "$@" "$context" >"$logf" 2>&1 \
    || { tail -n 30 "$logf" >&2; die "building $name failed (log: $logf)"; }
  log "$name built ($(elapsed "$t"))"
}

declare -A SUITE_OF_PG=([15]=bookworm [16]=bookworm [17]=trixie [18]=forky)
t0=$EPOCHREALTIME
needed_suites="bookworm trixie"
for v in $PG_MAJORS; do [[ "${SUITE_OF_PG[$v]:-}" == forky ]] && needed_suites+=" forky"; done
# debootstrap is mostly waiting on the mirror: the suites in parallel.
pids=()
for s in $needed_suites; do build_base "$s" & pids+=($!); done
for p in "${pids[@]}"; do wait "$p" || die "a base image failed (see above)"; done

for v in $PG_MAJORS; do
  suite=${SUITE_OF_PG[$v]:-}
  [[ -n "$suite" ]] || die "no Debian suite known to carry postgresql-$v"
  build "localhost/outbox-tail/postgres:$v" docker/images/postgres docker/images/postgres/Containerfile \
    --build-arg "BASE=localhost/outbox-tail/debian:$suite" --build-arg "PG_MAJOR=$v"
done

kafka_lib="$CACHE_ROOT/kafka-$KAFKA_VERSION/lib"
[[ -f "$kafka_lib/kafka_2.13-$KAFKA_VERSION.jar" ]] || die "Kafka $KAFKA_VERSION jars missing in $kafka_lib: run 'npm run setup'"
if ! has_image "localhost/outbox-tail/cp-kafka:$KAFKA_TAG"; then
  ctx=$(mktemp -d "$ENGINE_DIR/tmp/kafka-ctx.XXXXXX")
  cp -r docker/images/kafka/. "$ctx/"
  cp -r "$kafka_lib" "$ctx/lib"
  build "localhost/outbox-tail/cp-kafka:$KAFKA_TAG" "$ctx" "$ctx/Containerfile" \
    --build-arg "BASE=localhost/outbox-tail/debian:bookworm" --build-arg "KAFKA_VERSION=$KAFKA_VERSION"
  rm -rf "$ctx"
fi

if ! has_image localhost/outbox-tail/node:20; then
  ctx=$(mktemp -d "$ENGINE_DIR/tmp/node-ctx.XXXXXX")
  cp docker/images/node/Containerfile "$ctx/"
  mkdir -p "$ctx/host-ca"
  cp /usr/local/share/ca-certificates/*.crt "$ctx/host-ca/" 2>/dev/null || true
  build localhost/outbox-tail/node:20 "$ctx" "$ctx/Containerfile" --build-arg BASE=localhost/outbox-tail/debian:trixie
  rm -rf "$ctx"
fi
# The relay's own image, from the repository (rebuild after a source change:
# bin/build-images.sh --force relay). docker/Dockerfile.dockerignore filters the context.
relay_built=0
has_image localhost/outbox-tail/relay:dev || relay_built=1
build localhost/outbox-tail/relay:dev "$REPO" docker/Dockerfile --build-arg NODE_IMAGE=localhost/outbox-tail/node:20 \
  --ignorefile docker/Dockerfile.dockerignore
# systemd as PID 1 with the relay package in /opt/outbox-tail, taken from the
# relay image: rebuilt whenever the relay image was.
if [[ $relay_built -eq 1 ]]; then force+=(systemd); fi
build localhost/outbox-tail/systemd:trixie docker/images/systemd docker/images/systemd/Containerfile \
  --build-arg BASE=localhost/outbox-tail/node:20 --build-arg RELAY_IMAGE=localhost/outbox-tail/relay:dev

pm image prune -f >/dev/null 2>&1 || true
log "images ready ($(elapsed "$t0")): $(pm images --format '{{.Repository}}:{{.Tag}}' | grep outbox-tail | sort | tr '\n' ' ')"
