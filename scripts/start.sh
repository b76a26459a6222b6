#!/usr/bin/env bash
# The quickstart: installs what is missing, builds, and runs every service with a local nats-server under DATA_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
npm run --silent build
exec node lib/dist/launcher/main.js
