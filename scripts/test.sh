#!/usr/bin/env bash
# Runs every test against a real, throwaway PostgreSQL: installs the Debian packages it needs,
# starts a local cluster with the Supabase shim (its own folder and port), runs `swift test`, stops the cluster,
# and ends with the fault and load suite's figures (runs, faults injected, objects checked, losses: must be 0).
#
#   scripts/test.sh                 all tests
#   scripts/test.sh --filter Adopt  what swift test --filter selects
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

scripts/install-deps.sh
export STEWARD_PG_DIR=${STEWARD_TEST_PG_DIR:-$root/.local/test-pg}
export STEWARD_PG_PORT=${STEWARD_TEST_PG_PORT:-54339}
scripts/local-db.sh start
trap 'scripts/local-db.sh stop' EXIT
STEWARD_TEST_ADMIN_URL=$(scripts/local-db.sh admin-url); export STEWARD_TEST_ADMIN_URL=${STEWARD_TEST_ADMIN_URL%/postgres}
STEWARD_TEST_CA=$(scripts/local-db.sh ca); export STEWARD_TEST_CA

# The fault and load tests write their figures here; the report at the end adds them up.
export STEWARD_FAULT_LEDGER=$root/.build/fault-ledger.jsonl
rm -f "$STEWARD_FAULT_LEDGER"

# The alert rules, by Prometheus's own tool: syntax, then each alert's unit tests (well under a second).
promtool check rules config/prometheus/steward-alerts.yml
(cd config/prometheus && promtool test rules steward-alerts.test.yml)

swift build --build-tests
status=0
swift test --skip-build "$@" || status=$?
# Every libFuzzer harness replays its committed corpus and fuzzes a few seconds more (not for a filtered run).
if [ $# -eq 0 ]; then
  FUZZ_LEDGER=$STEWARD_FAULT_LEDGER scripts/fuzz.sh all "${STEWARD_FUZZ_SECONDS:-10}" >/dev/null || status=1
fi
# The whole run (no --filter) also builds the Debian package, has lintian check it, and installs, upgrades and
# purges it in a clean Debian 12 root (scripts/package-test.sh: debootstrap from the mirror apt uses).
if [ $# -eq 0 ]; then
  started=$SECONDS
  if deb=$(scripts/package.sh | tail -1) && scripts/lint-package.sh "$deb"; then
    echo "package: $deb built and checked by lintian in $((SECONDS - started)) s" >&2
  else
    status=1
  fi
  started=$SECONDS
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  if $SUDO env STEWARD_TEST_PG_DIR="$STEWARD_PG_DIR" STEWARD_TEST_PG_PORT="$STEWARD_PG_PORT" scripts/package-test.sh; then
    echo "package: installed, upgraded and purged in a clean Debian 12 root in $((SECONDS - started)) s" >&2
  else
    status=1
  fi
fi
python3 scripts/fault-report.py "$STEWARD_FAULT_LEDGER" || status=1
exit "$status"
