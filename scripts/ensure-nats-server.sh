#!/usr/bin/env bash
# Makes sure a current nats-server (the pinned 2.12.x) is at hand, links it as .tools/nats-server (where the launcher,
# tests and benchmarks look first) and prints its path.
# Order: NATS_SERVER_BIN if set; the cached build; a `go install` of the pinned release into the cache (about 30 s
# the first time, with the Go module proxy); else the system's nats-server (Debian's 2.9.10: one node only, no R>1
# streams, none of 2.10+'s features; the services refuse NATS_REPLICAS > 1 on it with a clear message).
set -euo pipefail
cd "$(dirname "$0")/.."
NATS_SERVER_VERSION=v2.12.15
cache="${WAGW_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/wa-gateway}/nats-server-$NATS_SERVER_VERSION"

found() {
  mkdir -p .tools
  ln -sfn "$1" .tools/nats-server
  echo "$1"
  exit 0
}
[ -n "${NATS_SERVER_BIN:-}" ] && found "$NATS_SERVER_BIN"
[ -x "$cache/nats-server" ] && found "$cache/nats-server"
if command -v go >/dev/null 2>&1; then
  echo "Building nats-server $NATS_SERVER_VERSION with Go into $cache ..." >&2
  mkdir -p "$cache"
  if GOBIN="$cache" GOFLAGS=-mod=mod go install "github.com/nats-io/nats-server/v2@$NATS_SERVER_VERSION" >&2; then
    found "$cache/nats-server"
  fi
  echo "go install of nats-server $NATS_SERVER_VERSION failed; falling back to the system's nats-server" >&2
fi
if ! command -v nats-server >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing nats-server (Debian package; no Go to build $NATS_SERVER_VERSION)..." >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nats-server >/dev/null
fi
if command -v nats-server >/dev/null 2>&1; then
  echo "WARNING: using $(nats-server --version) from the system: single node only (no cluster, NATS_REPLICAS=1)" >&2
  found "$(command -v nats-server)"
fi
echo "No nats-server: install Go (to build $NATS_SERVER_VERSION) or nats-server, or set NATS_URL / NATS_SERVER_BIN" >&2
exit 1
