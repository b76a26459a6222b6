#!/usr/bin/env bash
# The whole test suite: unit, integration (a real nats-server or 3-node cluster per test file), end-to-end over
# HTTP, the cluster drill, and the compose stack in Docker.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
# A Docker engine for the container tests (test/containers); they say "skipped" with the reason where none can be had.
bash scripts/ensure-docker.sh
npm run --silent build
results=$(mktemp)
status=0
node_modules/.bin/jest --forceExit --json --outputFile="$results" "$@" || status=$?
# A plain closing line that any CI reads: "tests: N passed, N failed".
node -e 'const r = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8")); console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests + r.numRuntimeErrorTestSuites} failed`)' "$results" || true
rm -f "$results"
exit "$status"
