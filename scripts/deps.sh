#!/usr/bin/env bash
# Installs what gatehouse's tests use, when it is missing: Debian's git, make
# and chromium (the page's browser test), and the page's locked npm packages
# (npm ci in web/, from package-lock.json). Node.js 20 or newer must be there
# (playwright-core needs it); Debian 12's own nodejs is 18.
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
command -v git >/dev/null || need+=(git)
command -v make >/dev/null || need+=(make)
[ -x /usr/bin/chromium ] || need+=(chromium)
command -v node >/dev/null || need+=(nodejs npm)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}"
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 20 ]; then
  echo "Node.js $major is too old for the page's browser test (playwright-core needs 20 or newer)" >&2
  exit 1
fi
if [ ! -d web/node_modules ] || [ web/package-lock.json -nt web/node_modules ]; then
  (cd web && npm ci --no-audit --no-fund --loglevel=error)
fi
