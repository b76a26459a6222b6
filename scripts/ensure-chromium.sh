#!/usr/bin/env bash
# Makes sure Debian's Chromium is at /usr/bin/chromium, for the console's browser tests (test/browser). Quiet when it
# is there. As root with apt-get it installs the `chromium` package; where it cannot, it says why and still exits 0:
# the browser tests then report "skipped: no Chromium (...)" (and fail under CI=true).
set -uo pipefail
[ -x /usr/bin/chromium ] && exit 0
give_up() {
  echo "ensure-chromium: no Chromium: $1 (the browser tests will be skipped)" >&2
  exit 0
}
[ "$(id -u)" = 0 ] || give_up "not root, cannot apt-get install chromium"
command -v apt-get >/dev/null 2>&1 || give_up "no apt-get to install chromium"
echo "ensure-chromium: installing chromium (Debian package)..." >&2
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1 \
  || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1; } \
  || give_up "apt-get install chromium failed"
echo "ensure-chromium: $(/usr/bin/chromium --version 2>/dev/null)" >&2
