#!/usr/bin/env bash
# Generates TypeScript types for every .proto file into lib/src/generated (git-ignored build output).
set -euo pipefail
cd "$(dirname "$0")/.."
out=lib/src/generated
rm -rf "$out" && mkdir -p "$out"
node_modules/.bin/proto-loader-gen-types --longs=String --enums=String --defaults --oneofs --grpcLib=@grpc/grpc-js \
  --outDir="$out" proto/*.proto >/dev/null
