#!/usr/bin/env bash
# Runs the benchmarks against the local cluster with a release build, and writes each table to
# bench/results/<name>-<date>-<host>.md as well as the terminal. Loopback only, bounded in time.
#
#   bench/run.sh all         every benchmark below, one after the other, into one file (about 30 minutes on 2 cores)
#   bench/run.sh migrate     steward migrate against psql -1 -f, sqitch, sql-migrate, yoyo (a few minutes)
#   bench/run.sh daemon      steward run: READY time, idle RSS/CPU, fire delay (and beside pg_cron), control latency (about 14 minutes)
#   bench/run.sh usernames   username-check over 100k, 1M and 10M profiles against the bare SQL (about 20 minutes)
#   bench/run.sh orphans     orphan-avatars over 100k, 1M and 3M objects through the emulator (about 15 minutes)
#   bench/run.sh legacy      import-legacy-users over 10k and 200k legacy users: time and peak RSS (a minute or two)
#   bench/run.sh verify      steward verify (recorded state, and with no record: the shadow database) beside steward migrate
#                            of the same 25 files and the server's CREATE/DROP DATABASE (a minute or two)
#   bench/run.sh deploy      six schema changes to a 100k-row profiles under app traffic (pgbench, PostgREST-style requests)
#                            and an analytics transaction that comes and goes: steward migrate beside psql -1 -f of naive
#                            files and psql of Steward's files; app p50/p99/max and errors against a baseline (about 5 minutes)
#   bench/run.sh fleet       steward fleet migrate of the app's files over 200 databases at --parallel 1, 4 and 8 against
#                            sequential shell loops of steward migrate and of psql -1 -f; fleet status of 200 targets (about 5 minutes)
#
# Environment: STEWARD_PG_PORT / STEWARD_PG_DIR (the local cluster), BENCH_SIZES (e.g. 100000,1000000: the sizes
# of the usernames, orphans and legacy runs), BENCH_RUNS (username-check runs a size; verify rounds), BENCH_EMULATOR_PORT,
# BENCH_KEEP_DB=1 (keep the orphan databases for the next run), BENCH_ONLY=control (the daemon bench's control socket part only),
# BENCH_ROWS / BENCH_CLIENTS / BENCH_CLIENT_RATE / BENCH_RUNNERS (the deploy bench: profiles, app connections, requests a second each, runners),
# BENCH_TARGETS / BENCH_STATUS_RUNS (the fleet bench: databases, fleet status runs).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
which=${1:-}
case "$which" in
  all) benches="migrate daemon usernames orphans" ;;
  migrate|daemon|usernames|orphans|legacy|verify|deploy|fleet) benches=$which ;;
  *) sed -n '2,23p' "$0" >&2; exit 64 ;;
esac

apt_install() {
  dpkg-query -W -f='${Status}\n' "$@" 2>/dev/null | grep -c "install ok installed" | grep -qx "$#" && return 0
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
scripts/install-deps.sh
case " $benches " in *" migrate "*)
  # The peers: sqitch and sql-migrate from Debian, yoyo-migrations from PyPI.
  apt_install sqitch libdbd-pg-perl sql-migrate
  command -v yoyo >/dev/null || python3 -m pip install --quiet --disable-pip-version-check yoyo-migrations ;;
esac
case " $benches " in *" daemon "*) apt_install postgresql-15-cron ;; esac
# pgbench (the deploy bench's app) comes with the server package, which install-deps.sh installs.
case " $benches " in *" deploy "*) command -v pgbench >/dev/null || apt_install postgresql-15 ;; esac

swift build -c release --product steward >/dev/null
# The static build is what gets deployed (README): no Swift runtime to load at start.
swift build -c release --static-swift-stdlib --product steward --build-path .build/static >/dev/null
scripts/local-db.sh start >/dev/null

mkdir -p bench/results
out="bench/results/$which-$(date +%Y-%m-%d)-$(hostname).md"
{
  echo "# Steward benchmarks: $which — $(date -u +%Y-%m-%dT%H:%MZ) — $(hostname), $(nproc) cores, $(uname -m)"
  echo
  for bench in $benches; do
    case $bench in usernames) script=username_bench.py ;; orphans) script=orphan_bench.py ;; legacy) script=legacy_import_bench.py ;; *) script=${bench}_bench.py ;; esac
    python3 "bench/$script"
    echo
  done
} | tee "$out"
echo "written: $out" >&2
