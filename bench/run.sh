#!/usr/bin/env bash
# Runs one benchmark against the local cluster with a release build. Loopback only, bounded in time.
#
#   bench/run.sh migrate     steward migrate against psql -1 -f (about 1 minute)
#   bench/run.sh daemon      steward run: READY time, idle RSS/CPU, fire delay, control latency (about 3 minutes)
#   bench/run.sh usernames   username-check over 100k and 1M profiles against the bare SQL (several minutes)
#   bench/run.sh orphans     orphan-avatars over 100k and 1M objects through the emulator (about 10 minutes)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
case "${1:-}" in
  migrate) script=migrate_bench.py ;;
  daemon) script=daemon_bench.py ;;
  usernames) script=username_bench.py ;;
  orphans) script=orphan_bench.py ;;
  *) sed -n '2,8p' "$0" >&2; exit 64 ;;
esac
scripts/install-deps.sh
swift build -c release --product steward >/dev/null
scripts/local-db.sh start
exec python3 "bench/$script"
