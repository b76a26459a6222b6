#!/usr/bin/env bash
# Writes the gateway's OpenAPI document (clients/api/openapi.json, the one /v1/openapi.json serves, sandbox routes
# included) from the built gateway, generates the client's types from it and builds the client package. Run by
# `npm run build` after tsc has built the services, and by `npm run lint` (which lints the document).
set -euo pipefail
cd "$(dirname "$0")/.."
node_modules/.bin/tsc -b services/gateway
node services/gateway/dist/cli/openapi.js clients/api/openapi.json
mkdir -p clients/api/src/generated
node_modules/.bin/openapi-typescript clients/api/openapi.json --output clients/api/src/generated/schema.ts --silent
node_modules/.bin/tsc -b clients/api
