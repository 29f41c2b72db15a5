#!/usr/bin/env bash
# Benchmark: username-check over 100k and 1M profiles against the bare SQL. Loopback only, a few minutes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/install-deps.sh
swift build -c release --product steward >/dev/null
scripts/local-db.sh start
exec python3 bench/username_bench.py
