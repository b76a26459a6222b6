#!/usr/bin/env bash
# Makes sure a Docker engine answers, for the container tests (test/containers). Quiet when one already runs.
# As root with apt-get it installs Debian's engine and docker-compose (v1) when missing and starts dockerd in the
# background (log: $DOCKERD_LOG). Where no engine can be had it says why and still exits 0: the container tests
# then report "skipped: no Docker engine (...)" instead of failing the whole run.
set -uo pipefail
log="${DOCKERD_LOG:-/var/log/dockerd.log}"

engine_answers() { timeout 20 docker info >/dev/null 2>&1; }
give_up() {
  echo "ensure-docker: no Docker engine: $1 (the container tests will be skipped)" >&2
  exit 0
}

engine_answers && command -v docker-compose >/dev/null 2>&1 && exit 0
[ "$(id -u)" = 0 ] || give_up "not root, cannot install docker.io and docker-compose or start dockerd"
command -v apt-get >/dev/null 2>&1 || give_up "no apt-get to install docker.io and docker-compose"

if ! command -v dockerd >/dev/null 2>&1 || ! command -v docker-compose >/dev/null 2>&1; then
  echo "ensure-docker: installing docker.io and docker-compose (Debian packages)..." >&2
  export DEBIAN_FRONTEND=noninteractive
  { apt-get update -qq && apt-get install -y -qq docker.io docker-compose; } >/dev/null 2>&1 \
    || give_up "apt-get install docker.io docker-compose failed"
fi

if ! engine_answers; then
  # A machine without systemd (containers, CI runners): start the daemon ourselves, detached from this shell.
  echo "ensure-docker: starting dockerd (log: $log)..." >&2
  setsid nohup dockerd >"$log" 2>&1 </dev/null &
  for _ in $(seq 1 60); do
    engine_answers && break
    sleep 1
  done
  engine_answers || give_up "dockerd did not answer within 60 s (see $log)"
fi
echo "ensure-docker: Docker engine $(docker version --format '{{.Server.Version}}' 2>/dev/null) is up" >&2
