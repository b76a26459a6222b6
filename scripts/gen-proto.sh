#!/usr/bin/env bash
# Generates TypeScript types for every .proto file into lib/src/generated (git-ignored build output).
set -euo pipefail
cd "$(dirname "$0")/.."
out=lib/src/generated
rm -rf "$out" && mkdir -p "$out"
node_modules/.bin/proto-loader-gen-types --longs=String --enums=String --defaults --oneofs --grpcLib=@grpc/grpc-js --includeDirs=proto \
  --outDir="$out" $(cd proto && echo *.proto) >/dev/null
# call.proto declares no service, only the Call stream's frames: its package type is unused (and fails noUnusedLocals).
rm -f "$out/call.ts"
