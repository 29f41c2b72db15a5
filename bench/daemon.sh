#!/usr/bin/env bash
# Benchmark: steward run (time to READY, idle RSS/CPU, fire delay, control-socket latency). Loopback only, about 2 minutes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/install-deps.sh
swift build -c release --product steward >/dev/null
scripts/local-db.sh start
exec python3 bench/daemon_bench.py
