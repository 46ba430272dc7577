#!/usr/bin/env bash
# Installs the Debian packages gatehouse's tests use, when they are missing.
set -euo pipefail
need=()
command -v git >/dev/null || need+=(git)
command -v make >/dev/null || need+=(make)
[ ${#need[@]} -eq 0 ] && exit 0
echo "installing: ${need[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
$sudo apt-get install -y -qq "${need[@]}"
