#!/usr/bin/env bash
# Builds the images the container tests need without any image registry (none is reachable here):
#   images.sh base TAG   a stand-in for node:20-bookworm-slim: Debian bookworm (debootstrap minbase, from the Debian
#                        mirror) + this machine's Node and npm + its CA bundle (npm inside `docker build` reaches the
#                        registry only through this network's TLS interception) + a `node` user (uid 1000)
#   images.sh nats TAG   nats-server (the pinned 2.12.x that scripts/ensure-nats-server.sh builds) + the libraries it
#                        links + busybox (sh, wget): takes the same compose command and health check as nats:*-alpine
# Needs root (debootstrap, chroot) and apt-get. Each run builds afresh; images.ts skips tags that exist.
# The base image's label (inherited by every image built on it) lets images.ts prune only this test's leftovers.
set -euo pipefail
cd "$(dirname "$0")/../.."
what=$1 tag=$2
work=$(mktemp -d /tmp/wagw-image.XXXXXX)
trap 'rm -rf "$work"' EXIT
root="$work/rootfs"
export DEBIAN_FRONTEND=noninteractive

base() {
  if ! command -v debootstrap >/dev/null 2>&1; then
    { apt-get update -qq && apt-get install -y -qq debootstrap; } >/dev/null
  fi
  debootstrap --variant=minbase bookworm "$root" "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" >"$work/log" 2>&1 \
    || { tail -20 "$work/log" >&2; exit 1; }
  # Where the official image has them.
  install -m 0755 "$(readlink -f "$(command -v node)")" "$root/usr/local/bin/node"
  mkdir -p "$root/usr/local/lib/node_modules"
  cp -a "$(dirname "$(readlink -f "$(command -v npm)")")/.." "$root/usr/local/lib/node_modules/npm"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
  install -D -m 0644 /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
  chroot "$root" groupadd --gid 1000 node
  chroot "$root" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/var/log/*
  tar -C "$root" -c . | docker import \
    -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    -c 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
    -c 'LABEL org.wagw.test-image=base' \
    -c 'CMD ["node"]' - "$tag" >/dev/null
}

nats() {
  local bin
  bin=$(bash scripts/ensure-nats-server.sh)
  mkdir -p "$root/usr/local/bin" "$root/bin" "$root/etc" "$root/data" "$root/tmp"
  install -m 0755 "$bin" "$root/usr/local/bin/nats-server"
  # The Go build links libc dynamically: copy what it links (ld.so included), following symlinks.
  for lib in $(ldd "$bin" | grep -o '/[^ ]*'); do cp --parents -L "$lib" "$root"; done
  # busybox from Debian's package, extracted here (the machine's own packages stay untouched).
  (cd "$work" && apt-get download busybox-static >/dev/null 2>&1) \
    || { apt-get update -qq >/dev/null && (cd "$work" && apt-get download busybox-static >/dev/null); }
  dpkg-deb -x "$work"/busybox-static_*.deb "$work/bb"
  install -m 0755 "$work/bb/bin/busybox" "$root/bin/busybox"
  for applet in sh wget ls cat; do ln -s busybox "$root/bin/$applet"; done
  echo 'root:x:0:0:root:/root:/bin/sh' >"$root/etc/passwd"
  echo 'root:x:0:' >"$root/etc/group"
  chmod 1777 "$root/tmp"
  tar -C "$root" -c . | docker import \
    -c 'ENV PATH=/usr/local/bin:/bin' \
    -c 'EXPOSE 4222 6222 8222' \
    -c 'CMD ["nats-server", "-js", "-sd", "/data"]' - "$tag" >/dev/null
}

case "$what" in
  base) base ;;
  nats) nats ;;
  *) echo "usage: $0 base|nats TAG" >&2; exit 2 ;;
esac
