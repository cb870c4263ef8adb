#!/usr/bin/env bash
# Fetches the CloudEvents Java SDK (its Kafka binding and JSON event format)
# from Maven Central once, compiles test/support/java/CloudEventsDump.java
# against it, and prints the classpath to run it with (last line of stdout).
# test/integration/cloudevents-format.test.ts runs it to check that every
# record the relay writes in a CloudEvents format parses with the Java SDK.
#
# Idempotent: jars are cached in $OUTBOX_TAIL_CACHE_DIR/cloudevents-java-<version>
# (default ~/.cache/outbox-tail), the compiled class under classes-<source hash>.
# Needs Maven (mvn) the first time and a JDK (javac) 17+; as root with apt-get,
# installs the Debian packages maven and openjdk-17-jdk-headless when missing.
#
# Environment:
#   OUTBOX_TAIL_CACHE_DIR   cache root (default: $HOME/.cache/outbox-tail)
#   OUTBOX_TAIL_MAVEN_REPO  optional Maven local repository (default: Maven's ~/.m2/repository)
set -euo pipefail

CLOUDEVENTS_VERSION=4.0.1
SLF4J_VERSION=1.7.36

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SOURCE="$ROOT/test/support/java/CloudEventsDump.java"
CACHE_ROOT="${OUTBOX_TAIL_CACHE_DIR:-$HOME/.cache/outbox-tail}"
DIR="$CACHE_ROOT/cloudevents-java-$CLOUDEVENTS_VERSION"
LIB="$DIR/lib"
MARKER="$DIR/.complete"

log() { printf '[cloudevents-java] %s\n' "$*" >&2; }
die() { printf '[cloudevents-java] ERROR: %s\n' "$*" >&2; exit 1; }

can_install() { [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; }
apt_install() {
  log "apt-get install $*"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q --no-install-recommends "$@" >/tmp/outbox-tail-apt.log 2>&1 \
    || { apt-get update -q >>/tmp/outbox-tail-apt.log 2>&1 && apt-get install -y -q --no-install-recommends "$@" >>/tmp/outbox-tail-apt.log 2>&1; } \
    || { tail -n 20 /tmp/outbox-tail-apt.log >&2; die "apt-get install $* failed"; }
}

mkdir -p "$DIR"
# Serialise concurrent runs (test workers) on the same cache.
exec 9>"$DIR/.lock"
flock 9

if [[ ! -f "$MARKER" ]]; then
  if ! command -v mvn >/dev/null 2>&1; then
    can_install || die "Maven (mvn) is needed once to fetch the CloudEvents Java SDK: install the Debian package 'maven'"
    apt_install maven
  fi
  work=$(mktemp -d "${TMPDIR:-/tmp}/outbox-tail-cloudevents-pom.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  cat >"$work/pom.xml" <<POM
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.outbox-tail</groupId>
  <artifactId>cloudevents-java</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>io.cloudevents</groupId><artifactId>cloudevents-kafka</artifactId><version>${CLOUDEVENTS_VERSION}</version></dependency>
    <!-- the application/cloudevents+json format the Kafka deserializer finds by ServiceLoader (structured mode) -->
    <dependency><groupId>io.cloudevents</groupId><artifactId>cloudevents-json-jackson</artifactId><version>${CLOUDEVENTS_VERSION}</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-nop</artifactId><version>${SLF4J_VERSION}</version></dependency>
  </dependencies>
</project>
POM
  rm -rf "$LIB.partial"
  args=(-q -B -f "$work/pom.xml" dependency:copy-dependencies "-DoutputDirectory=$LIB.partial" -DincludeScope=runtime)
  [[ -n "${OUTBOX_TAIL_MAVEN_REPO:-}" ]] && args+=("-Dmaven.repo.local=$OUTBOX_TAIL_MAVEN_REPO")
  log "fetching CloudEvents Java SDK $CLOUDEVENTS_VERSION with Maven into $LIB"
  if ! mvn "${args[@]}" >"$work/mvn.log" 2>&1; then
    tail -n 30 "$work/mvn.log" >&2
    die "mvn dependency:copy-dependencies failed (is Maven Central reachable?)"
  fi
  [[ -f "$LIB.partial/cloudevents-kafka-$CLOUDEVENTS_VERSION.jar" ]] || die "cloudevents-kafka-$CLOUDEVENTS_VERSION.jar missing after the fetch"
  rm -rf "$LIB"
  mv "$LIB.partial" "$LIB"
  printf 'cloudevents=%s fetched=%s\n' "$CLOUDEVENTS_VERSION" "$(date -u +%FT%TZ)" >"$MARKER"
fi

if ! command -v javac >/dev/null 2>&1; then
  can_install || die "javac (a JDK 17+) is needed to compile $SOURCE: install openjdk-17-jdk-headless"
  apt_install openjdk-17-jdk-headless
fi
hash=$(sha256sum "$SOURCE" | cut -c1-16)
CLASSES="$DIR/classes-$hash"
if [[ ! -f "$CLASSES/CloudEventsDump.class" ]]; then
  rm -rf "$CLASSES.partial"
  mkdir -p "$CLASSES.partial"
  javac -nowarn -d "$CLASSES.partial" -cp "$LIB/*" "$SOURCE"
  rm -rf "$CLASSES"
  mv "$CLASSES.partial" "$CLASSES"
  log "compiled $(basename "$SOURCE") into $CLASSES"
fi
printf '%s:%s/*\n' "$CLASSES" "$LIB"
