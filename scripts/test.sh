#!/usr/bin/env bash
# The whole test suite: unit, integration (a real nats-server per test file) and end-to-end over HTTP.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
npm run --silent build
exec node_modules/.bin/jest --forceExit "$@"
