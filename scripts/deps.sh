#!/usr/bin/env bash
# Installs what gatehouse's tests use, when it is missing, and says for each
# Debian package whether it was there and why the tests need it. Then the
# page's locked npm packages (npm ci in web/, from package-lock.json).
# Node.js 20 or newer must be there (playwright-core needs it); Debian 12's
# own nodejs is 18, so a newer one (NodeSource's) is usually installed first.
set -euo pipefail
cd "$(dirname "$0")/.."

# package|command that proves it|why the tests need it
deps=(
  "git|git|the gate runs real git, and every attack test builds its repository with it"
  "make|make|make test is the one test command"
  "chromium|chromium|the page's browser test drives a real browser"
  "nodejs|node|the page's tests run on Node.js (20 or newer)"
  "npm|npm|npm ci installs the page's locked test packages"
  "gh|gh|the GitHub methods run the real gh against a local fake of GitHub's API"
  "postgresql|initdb|the relay store's contract tests run on a real PostgreSQL (Debian keeps initdb off PATH, so dpkg decides)"
)

# installed: dpkg knows the package, or its command is there from another
# source (NodeSource's nodejs carries npm, for example).
installed() {
  [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ] || command -v "$2" >/dev/null
}

need=()
for d in "${deps[@]}"; do
  IFS='|' read -r pkg cmd why <<<"$d"
  if installed "$pkg" "$cmd"; then
    echo "deps: $pkg: present ($why)"
  else
    echo "deps: $pkg: missing, installing ($why)"
    need+=("$pkg")
  fi
done
if [ ${#need[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null; then
    echo "deps: missing ${need[*]}, and this machine has no apt-get to install them with; install them with your package manager (Node.js 20 or newer) and run make test again" >&2
    exit 1
  fi
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
  echo "deps: web/node_modules: installing the page's locked npm packages (npm ci)"
  (cd web && npm ci --no-audit --no-fund --loglevel=error)
else
  echo "deps: web/node_modules: present (the page's locked npm packages)"
fi
