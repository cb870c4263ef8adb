#!/usr/bin/env bash
# Fetches Debezium Server (io.debezium:debezium-server-dist, tar.gz, ~700 MB)
# from Maven Central once into a cache outside the repo and extracts it, for
# `npm run bench -- --compare debezium` (dev/bench/debezium/debezium-relay.ts).
# Never used by the tests or CI.
#
# Idempotent and fast when present: a marker file written after a complete
# extraction is the only thing checked. A partial download is resumed (curl -C -)
# and the archive is only kept until it has been extracted once.
#
# Prints the extracted directory (the one holding run.sh and lib/) on stdout;
# progress goes to stderr.
#
# Environment:
#   OUTBOX_TAIL_CACHE_DIR        cache root (default: $HOME/.cache/outbox-tail)
#   OUTBOX_TAIL_DEBEZIUM_VERSION default 3.6.3.Final: the newest that Maven Central served us
#                                (its maven-metadata.xml still names 3.6.0.Final as latest)
#   OUTBOX_TAIL_MAVEN_CENTRAL    default https://repo1.maven.org/maven2
set -euo pipefail

VERSION="${OUTBOX_TAIL_DEBEZIUM_VERSION:-3.6.3.Final}"
CENTRAL="${OUTBOX_TAIL_MAVEN_CENTRAL:-https://repo1.maven.org/maven2}"
CACHE_ROOT="${OUTBOX_TAIL_CACHE_DIR:-$HOME/.cache/outbox-tail}"
DIR="$CACHE_ROOT/debezium/$VERSION"
MARKER="$DIR/.complete"
ARCHIVE="$CACHE_ROOT/debezium/debezium-server-dist-$VERSION.tar.gz"
URL="$CENTRAL/io/debezium/debezium-server-dist/$VERSION/debezium-server-dist-$VERSION.tar.gz"

log() { printf '[fetch-debezium] %s\n' "$*" >&2; }
die() { printf '[fetch-debezium] ERROR: %s\n' "$*" >&2; exit 1; }

if [[ -f "$MARKER" ]]; then
  printf '%s\n' "$DIR/debezium-server"
  exit 0
fi

mkdir -p "$CACHE_ROOT/debezium"
# Two benches fetching at once would write the same archive: one waits for the other.
exec 9>"$CACHE_ROOT/debezium/.lock"
flock 9
if [[ -f "$MARKER" ]]; then
  printf '%s\n' "$DIR/debezium-server"
  exit 0
fi

log "fetching $URL (~700 MB, once) into $ARCHIVE"
# -C - resumes an interrupted download; --fail keeps an HTML error page out of the archive.
curl --fail --location --silent --show-error -C - --retry 3 -o "$ARCHIVE" "$URL" \
  || die "download failed (is Maven Central reachable? a resumed download of a complete file also fails: delete $ARCHIVE)"

log "extracting into $DIR"
rm -rf "$DIR.partial"
mkdir -p "$DIR.partial"
tar -xzf "$ARCHIVE" -C "$DIR.partial" || die "$ARCHIVE is not a complete tar.gz: delete it and run again"
[[ -f "$DIR.partial/debezium-server/run.sh" ]] || die "unexpected archive layout: no debezium-server/run.sh"
rm -rf "$DIR"
mv "$DIR.partial" "$DIR"
printf 'version=%s url=%s fetched=%s\n' "$VERSION" "$URL" "$(date -u +%FT%TZ)" >"$MARKER"
# The extracted tree is all the bench needs; the archive would double the cache.
rm -f "$ARCHIVE"
log "ready: $DIR/debezium-server ($(du -sh "$DIR" | cut -f1))"
printf '%s\n' "$DIR/debezium-server"
