#!/usr/bin/env bash
# Runs one benchmark against the local cluster with a release build. Loopback only, bounded in time.
#
#   bench/run.sh migrate     steward migrate against psql -1 -f, sqitch, sql-migrate, yoyo (a few minutes)
#   bench/run.sh daemon      steward run: READY time, idle RSS/CPU, fire delay, control latency (about 3 minutes)
#   bench/run.sh usernames   username-check over 100k and 1M profiles against the bare SQL (several minutes)
#   bench/run.sh orphans     orphan-avatars over 100k and 1M objects through the emulator (about 10 minutes)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
case "${1:-}" in
  migrate) script=migrate_bench.py
    # The peers: sqitch and sql-migrate from Debian, yoyo-migrations from PyPI.
    dpkg-query -W -f='${Status}' sqitch sql-migrate libdbd-pg-perl 2>/dev/null | grep -c "install ok installed" | grep -q 3 \
      || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends sqitch libdbd-pg-perl sql-migrate >/dev/null; }
    command -v yoyo >/dev/null || python3 -m pip install --quiet --disable-pip-version-check yoyo-migrations ;;
  daemon) script=daemon_bench.py ;;
  usernames) script=username_bench.py ;;
  orphans) script=orphan_bench.py ;;
  *) sed -n '2,8p' "$0" >&2; exit 64 ;;
esac
scripts/install-deps.sh
swift build -c release --product steward >/dev/null
# The static build is what gets deployed (README): no Swift runtime to load at start.
swift build -c release --static-swift-stdlib --product steward --build-path .build/static >/dev/null
scripts/local-db.sh start
exec python3 "bench/$script"
