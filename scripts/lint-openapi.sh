#!/usr/bin/env bash
# Writes the gateway's OpenAPI document and lints it with Redocly's recommended rules as errors (redocly.yaml).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/gen-client.sh
# No usage data leaves this machine, and no "new version" notice in CI logs.
REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true node_modules/.bin/redocly lint --format stylish clients/api/openapi.json
