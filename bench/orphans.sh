#!/usr/bin/env bash
# Benchmark: orphan-avatars over 100k and 1M objects against the bare SQL, through the Storage emulator. Loopback only.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/install-deps.sh
swift build -c release --product steward >/dev/null
scripts/local-db.sh start
exec python3 bench/orphan_bench.py
