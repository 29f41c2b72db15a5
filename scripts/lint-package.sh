#!/usr/bin/env bash
# Runs lintian on a built steward .deb: fails on any error, and on any warning not kept (with its reason) in
# scripts/packaging/deb/lintian-kept-warnings.
#
#   scripts/lint-package.sh .build/package/steward_0.1.0_amd64.deb
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
deb=${1:?usage: scripts/lint-package.sh steward_VERSION_ARCH.deb}
kept=$(grep -v '^#' "$root/scripts/packaging/deb/lintian-kept-warnings" | grep -v '^$' | paste -sd, -)
report=$(lintian --no-cfg --display-level '>=warning' --tag-display-limit 0 "$deb" 2>&1) || true
echo "$report" | sed 's/^/lintian: /' >&2
unexpected=$(echo "$report" | grep -E '^[EW]: ' | awk '{ print $3 }' | sort -u | grep -vxF -f <(echo "$kept" | tr , '\n') || true)
errors=$(echo "$report" | grep -c '^E: ' || true)
if [ "$errors" -gt 0 ] || [ -n "$unexpected" ]; then
    echo "lint-package: $errors error(s); warnings not kept: ${unexpected:-none}" >&2
    exit 1
fi
echo "lint-package: no errors; kept warnings: $kept" >&2
