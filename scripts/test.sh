#!/usr/bin/env bash
# The whole test suite: unit, integration (a real nats-server per test file) and end-to-end over HTTP.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
npm run --silent build
results=$(mktemp)
status=0
node_modules/.bin/jest --forceExit --json --outputFile="$results" "$@" || status=$?
# A plain closing line that any CI reads: "tests: N passed, N failed".
node -e 'const r = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8")); console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests + r.numRuntimeErrorTestSuites} failed`)' "$results" || true
rm -f "$results"
exit "$status"
