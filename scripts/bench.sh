#!/usr/bin/env bash
# `npm run bench`: builds, then runs every benchmark (each beside a baseline measured in the same run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
npm run --silent build
exec node -r ./bench/register.js bench/run.ts
