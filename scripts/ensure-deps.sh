#!/usr/bin/env bash
# Installs what the project needs on a fresh Debian machine: a current nats-server and the npm packages.
# Safe to run again: it only installs what is missing or out of date.
set -euo pipefail
cd "$(dirname "$0")/.."

# package.json's engines (>=20.19): the services load Baileys, an ES module, with require(), which 20.19 brought.
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)' 2>/dev/null; then
  echo "Node.js 20.19 or newer is required (found: $(node --version 2>/dev/null || echo none))." >&2
  exit 1
fi

# A current nats-server (2.12.x, built with Go and cached), linked as .tools/nats-server.
bash scripts/ensure-nats-server.sh >/dev/null

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "Installing npm packages..."
  npm ci --no-audit --no-fund --loglevel=error
fi
