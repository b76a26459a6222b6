#!/usr/bin/env bash
# Installs what the project needs on a fresh Debian machine: nats-server (Debian's package) and the npm packages.
# Safe to run again: it only installs what is missing or out of date.
set -euo pipefail
cd "$(dirname "$0")/.."

major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$major" -lt 20 ]; then
  echo "Node.js 20 or newer is required (found: $(node --version 2>/dev/null || echo none))." >&2
  exit 1
fi

if [ -z "${NATS_URL:-}" ] && ! command -v nats-server >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing nats-server (Debian package)..."
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nats-server >/dev/null
  else
    echo "nats-server is missing: run 'sudo apt-get install nats-server', or set NATS_URL to an existing server." >&2
    exit 1
  fi
fi

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "Installing npm packages..."
  npm ci --no-audit --no-fund --loglevel=error
fi
