#!/usr/bin/env bash
# Benchmark: steward migrate against psql -1 -f of the same files (see migrate_bench.py). Loopback only, bounded.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/install-deps.sh
swift build -c release --product steward >/dev/null
scripts/local-db.sh start
exec python3 bench/migrate_bench.py
