#!/usr/bin/env bash
# Installs what Steward builds and tests with, when it is missing: Debian packages (the server headers and gcc for
# the local shim's supautils stand-in; the packaging checks:
# dpkg-dev, lintian, groff-base and man-db for the man pages, prometheus for promtool, debootstrap for the
# package's install test), and three Python modules for
# the emulators and the tests, and squawk-cli for the lint comparison. Safe to run again: does nothing when everything is there.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
export DEBIAN_FRONTEND=noninteractive
apt_updated=no
apt_install() {
  if [ "$apt_updated" = no ]; then $SUDO apt-get update -qq; apt_updated=yes; fi
  $SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

packages=(pkg-config openssl tzdata systemd curl python3 libpq-dev libssl-dev libicu-dev libcurl4-openssl-dev libpg-query-dev
          postgresql postgresql-contrib postgresql-client postgresql-server-dev-15 gcc
          dpkg-dev lintian groff-base man-db prometheus debootstrap)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}" >&2
  # The postgresql package would create and start a system cluster; Steward uses its own throwaway one.
  $SUDO mkdir -p /etc/postgresql-common/createcluster.d
  echo "create_main_cluster = false" | $SUDO tee /etc/postgresql-common/createcluster.d/steward-no-main.conf >/dev/null
  apt_install "${missing[@]}"
fi

# The Storage emulator talks to Postgres through psycopg; the tests check ES256 signatures with cryptography and
# drive the Storage emulator with Supabase's own Python client, storage3 (pinned; PyPI only, Debian has none).
# From PyPI for the python3 on PATH, else from Debian when that python3 has no pip.
for module in "psycopg:psycopg[binary]:python3-psycopg" "cryptography:cryptography:python3-cryptography" "storage3:storage3==2.34.1:"; do
  IFS=: read -r name pypi debian <<<"$module"
  python3 -c "import $name" 2>/dev/null && continue
  echo "install-deps: installing $pypi for $(command -v python3)" >&2
  if ! python3 -m pip install --quiet --disable-pip-version-check "$pypi" >&2 2>/dev/null; then
    if [ -z "$debian" ]; then echo "install-deps: could not install $pypi from PyPI" >&2; exit 1; fi
    apt_install "$debian"
  fi
done

# squawk-cli, the migration linter `steward lint` is compared with on the same corpus (Tests/LintTests; pinned;
# PyPI only: a prebuilt binary in a wheel, no Python module to import, so its command is what is checked).
if ! command -v squawk >/dev/null 2>&1; then
  echo "install-deps: installing squawk-cli==2.70.0 for $(command -v python3)" >&2
  python3 -m pip install --quiet --disable-pip-version-check "squawk-cli==2.70.0" >&2 2>/dev/null \
    || { echo "install-deps: could not install squawk-cli from PyPI" >&2; exit 1; }
fi
