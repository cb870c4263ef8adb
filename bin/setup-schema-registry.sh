#!/usr/bin/env bash
# Builds a runnable Apicurio Registry (Confluent-compatible API under /apis/ccompat/v7)
# from Maven Central for the schema-registry tests (docs/schema-registry.md), and
# fetches the Java consumer's jars (Apicurio's Avro serde, Kafka clients).
#
# Apicurio ships its server on Maven Central only as the un-augmented Quarkus
# application jar (io.apicurio:apicurio-registry-app), so this script wraps it in
# a one-module Maven project and lets quarkus-maven-plugin build the fast-jar
# (a legacy-jar: the runner jar and its lib/, as Apicurio 2.x packages itself). Storage is the default in-memory H2: no Kafka.
#
# Idempotent: when the cache holds the build it prints the paths and exits.
#
# Environment:
#   OUTBOX_TAIL_CACHE_DIR   cache root (default: $HOME/.cache/outbox-tail)
#
# Prints, last: APICURIO_RUN_JAR=<path> and SERDE_CLASSPATH_DIR=<path>.
set -euo pipefail

APICURIO_VERSION=${OUTBOX_TAIL_APICURIO_VERSION:-2.4.2.Final}
# The BOM Apicurio 3.3.3 names (3.33.3.1) is not on Maven Central; 3.33.2 is, and builds it.
QUARKUS_VERSION=${OUTBOX_TAIL_QUARKUS_VERSION:-2.16.4.Final}
KAFKA_CLIENTS_VERSION=4.1.1
SLF4J_SIMPLE_VERSION=2.0.17
# Bump when the build below changes: a cached build of an older recipe is rebuilt.
RECIPE=2

CACHE_ROOT="${OUTBOX_TAIL_CACHE_DIR:-$HOME/.cache/outbox-tail}"
DIR="$CACHE_ROOT/apicurio-registry-$APICURIO_VERSION"
RUN_JAR="$DIR/build/target/apicurio-registry-runner-$APICURIO_VERSION-runner.jar"
SERDE_DIR="$CACHE_ROOT/apicurio-serde-$APICURIO_VERSION/lib"

log() { printf '[setup-schema-registry] %s\n' "$*" >&2; }
die() { printf '[setup-schema-registry] ERROR: %s\n' "$*" >&2; exit 1; }
command -v mvn >/dev/null || die "maven not found: run bin/setup-local-stack.sh first (it installs maven), or apt-get install maven"
command -v java >/dev/null || die "java not found: run bin/setup-local-stack.sh first"

t0=$SECONDS
if [[ ! -f "$RUN_JAR" || "$(cat "$DIR/recipe" 2>/dev/null)" != "$RECIPE" ]]; then
  log "building Apicurio Registry $APICURIO_VERSION (Quarkus $QUARKUS_VERSION) into $DIR (first run: several minutes)"
  rm -rf "$DIR/build"
  mkdir -p "$DIR/build/src/main/resources"
  cat >"$DIR/build/pom.xml" <<POM
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>outbox-tail.dev</groupId>
  <artifactId>apicurio-registry-runner</artifactId>
  <version>$APICURIO_VERSION</version>
  <packaging>jar</packaging>
  <properties>
    <maven.compiler.source>11</maven.compiler.source>
    <maven.compiler.target>11</maven.compiler.target>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencyManagement>
    <dependencies>
      <dependency>
        <groupId>io.quarkus</groupId>
        <artifactId>quarkus-bom</artifactId>
        <version>$QUARKUS_VERSION</version>
        <type>pom</type>
        <scope>import</scope>
      </dependency>
    </dependencies>
  </dependencyManagement>
  <dependencies>
    <dependency>
      <groupId>io.apicurio</groupId>
      <artifactId>apicurio-registry-app</artifactId>
      <version>$APICURIO_VERSION</version>
      <exclusions>
        <!-- JSON Schema support's validator is published on JitPack only, not on Maven Central. -->
        <exclusion><groupId>com.github.everit-org.json-schema</groupId><artifactId>org.everit.json.schema</artifactId></exclusion>
        <!-- A Quarkus extension whose deployment half is not on Maven Central (build-time config docs only). -->
        <exclusion><groupId>io.apicurio</groupId><artifactId>apicurio-common-app-components-config-index</artifactId></exclusion>
      </exclusions>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <groupId>io.quarkus</groupId>
        <artifactId>quarkus-maven-plugin</artifactId>
        <version>$QUARKUS_VERSION</version>
        <executions>
          <execution>
            <goals><goal>build</goal></goals>
          </execution>
        </executions>
      </plugin>
    </plugins>
  </build>
</project>
POM
  # What the excluded extension's build step would have produced: the (here empty) list of dynamic config properties.
  mkdir -p "$DIR/build/src/main/java/outboxtail/dev"
  cat >"$DIR/build/src/main/java/outboxtail/dev/DynamicConfigPropertyListProducer.java" <<'JAVA'
package outboxtail.dev;

import io.apicurio.common.apps.config.DynamicConfigPropertyList;
import javax.enterprise.context.ApplicationScoped;
import javax.enterprise.inject.Produces;
import javax.inject.Singleton;

@ApplicationScoped
public class DynamicConfigPropertyListProducer {
  @Produces
  @Singleton
  DynamicConfigPropertyList dynamicConfigPropertyList() {
    return new DynamicConfigPropertyList(java.util.List.of());
  }
}
JAVA
  app_jar="$HOME/.m2/repository/io/apicurio/apicurio-registry-app/$APICURIO_VERSION/apicurio-registry-app-$APICURIO_VERSION.jar"
  mvn -q -B dependency:get -Dartifact="io.apicurio:apicurio-registry-app:$APICURIO_VERSION" -Dtransitive=false >&2
  # Quarkus reads build-time configuration from the application's own resources, not from a dependency's.
  unzip -p "$app_jar" application.properties >"$DIR/build/src/main/resources/application.properties"
  printf '\nquarkus.index-dependency.registry.group-id=io.apicurio\nquarkus.index-dependency.registry.artifact-id=apicurio-registry-app\n' \
    >>"$DIR/build/src/main/resources/application.properties"
  (cd "$DIR/build" && mvn -B -q package -DskipTests >"$DIR/build.log" 2>&1) || { tail -n 40 "$DIR/build.log" >&2; die "Apicurio build failed (log: $DIR/build.log)"; }
  [[ -f "$RUN_JAR" ]] || die "build finished but $RUN_JAR is missing (log: $DIR/build.log)"
  echo "$RECIPE" >"$DIR/recipe"
  log "built in $((SECONDS - t0)) s"
fi

if [[ ! -f "$SERDE_DIR/.complete" ]]; then
  log "fetching Apicurio's Avro serde $APICURIO_VERSION and kafka-clients $KAFKA_CLIENTS_VERSION into $SERDE_DIR"
  mkdir -p "$SERDE_DIR/../pom"
  cat >"$SERDE_DIR/../pom/pom.xml" <<POM
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>outbox-tail.dev</groupId>
  <artifactId>apicurio-serde-consumer</artifactId>
  <version>$APICURIO_VERSION</version>
  <dependencies>
    <dependency><groupId>io.apicurio</groupId><artifactId>apicurio-registry-serdes-avro-serde</artifactId><version>$APICURIO_VERSION</version></dependency>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-clients</artifactId><version>$KAFKA_CLIENTS_VERSION</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-simple</artifactId><version>$SLF4J_SIMPLE_VERSION</version></dependency>
  </dependencies>
</project>
POM
  (cd "$SERDE_DIR/../pom" && mvn -B -q dependency:copy-dependencies -DoutputDirectory="$SERDE_DIR" >&2) || die "fetching the serde jars failed"
  touch "$SERDE_DIR/.complete"
fi
log "ready ($((SECONDS - t0)) s)"
echo "APICURIO_RUN_JAR=$RUN_JAR"
echo "SERDE_CLASSPATH_DIR=$SERDE_DIR"
