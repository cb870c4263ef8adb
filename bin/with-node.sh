#!/usr/bin/env bash
# Runs a command under a supported Node.js (bin/node-runtime.sh: ^22.22 || >=24.6):
# the machine's own when it is supported, else the pinned Node.js 24 from the
# cache, fetched from the npm registry the first time. npm, npx and every child
# process the command starts find that node first on PATH.
#
#   bin/with-node.sh [--ready] [--build] COMMAND [ARGS...]
#     --ready          first make the clone runnable for the native stack (what the demo and
#                      `npm test` run on): bin/setup-local-stack.sh without the container engine,
#                      and `npm ci` when node_modules is missing or older than the lockfile
#     --build          `npm run build` before the command (the relay runs from dist/)
#   bin/with-node.sh --env            print the `export PATH=...` line instead (.ci/run evals it)
#
#   OUTBOX_TAIL_NODE_VERSION=22 bin/with-node.sh ...   run under the pinned 22 instead (CI matrix)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bin/node-runtime.sh
source "$here/node-runtime.sh"

ready=0
build=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --ready) ready=1 ;;
    --build) build=1 ;;
    --env)
      bindir=$(node_select)
      printf "export PATH='%s':\"\$PATH\"\n" "$bindir"
      exit 0
      ;;
    --) shift; break ;;
    *) break ;;
  esac
  shift
done
[[ $# -gt 0 ]] || { echo "usage: $0 [--ready] [--build] COMMAND [ARGS...] | --env" >&2; exit 64; }

cd "$here/.."
# The container engine's packages are `npm run setup`'s (bin/with-engine.sh needs them), not the native stack's.
# Nor are the extra Kafka and Node.js versions of CI's matrix entries (npm run setup fetches them).
if [[ $ready -eq 1 ]]; then
  OUTBOX_TAIL_SETUP_CONTAINERS=0 OUTBOX_TAIL_EXTRA_KAFKA_VERSIONS="${OUTBOX_TAIL_EXTRA_KAFKA_VERSIONS-}" bash bin/setup-local-stack.sh
fi
bindir=$(node_select)
export PATH="$bindir:$PATH"
if [[ $ready -eq 1 ]] && [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  echo "[with-node] npm ci under Node.js $(node --version) (node_modules missing or older than package-lock.json)"
  npm ci --no-audit --no-fund
fi
if [[ $build -eq 1 ]]; then npm run --silent build; fi
exec "$@"
