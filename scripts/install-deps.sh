#!/usr/bin/env bash
# Installs the Debian packages Steward builds and tests with, if any is missing.
# Safe to run again: does nothing when everything is there.
set -euo pipefail

packages=(pkg-config openssl tzdata systemd libicu-dev libcurl4-openssl-dev curl libpq-dev libssl-dev libinih-dev postgresql postgresql-contrib postgresql-client python3)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The Storage emulator talks to Postgres through psycopg; the tests check ES256 signatures with cryptography (PyPI).
for module in "psycopg:psycopg[binary]" "cryptography:cryptography"; do
  if ! python3 -c "import ${module%%:*}" 2>/dev/null; then
    echo "install-deps: installing ${module#*:} (PyPI)" >&2
    python3 -m pip install --quiet --disable-pip-version-check "${module#*:}" >&2
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${missing[*]}" >&2
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# The postgresql package would create and start a system cluster; Steward uses its own throwaway one.
$SUDO mkdir -p /etc/postgresql-common/createcluster.d
echo "create_main_cluster = false" | $SUDO tee /etc/postgresql-common/createcluster.d/steward-no-main.conf >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
