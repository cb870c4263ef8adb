#!/usr/bin/env bash
# Makes a fresh clone runnable: native stack prerequisites (bin/setup-local-stack.sh,
# idempotent and fast when all is present) and npm dependencies from the lockfile
# when node_modules is missing or older than package-lock.json.
set -euo pipefail
cd "$(dirname "$0")/.."
bash bin/setup-local-stack.sh
if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  echo "[ensure-ready] npm ci (node_modules missing or older than package-lock.json)"
  npm ci --no-audit --no-fund
fi
