#!/usr/bin/env bash
# Installs what the project needs on a fresh Debian machine: a current nats-server and the npm packages.
# Safe to run again: it only installs what is missing or out of date.
set -euo pipefail
cd "$(dirname "$0")/.."

major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$major" -lt 20 ]; then
  echo "Node.js 20 or newer is required (found: $(node --version 2>/dev/null || echo none))." >&2
  exit 1
fi

# A current nats-server (2.12.x, built with Go and cached), linked as .tools/nats-server.
bash scripts/ensure-nats-server.sh >/dev/null

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "Installing npm packages..."
  npm ci --no-audit --no-fund --loglevel=error
fi
