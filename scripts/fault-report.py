#!/usr/bin/env python3
"""Prints the fault and load suite's figures from the ledger the tests wrote (one JSON object a line):
a table by scenario, then one closing line. Exits 1 when any loss was recorded, 0 otherwise.

    scripts/fault-report.py LEDGER
"""
import json
import sys
from collections import OrderedDict


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 64
    try:
        lines = open(sys.argv[1]).read().splitlines()
    except FileNotFoundError:
        lines = []
    rows = OrderedDict()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            print(f"{sys.argv[1]}:{number}: not a JSON line", file=sys.stderr)
            return 1
        row = rows.setdefault(entry["scenario"], {"tests": 0, "runs": 0, "faults": 0, "objects_checked": 0, "losses": 0})
        row["tests"] += 1
        for key in ("runs", "faults", "objects_checked", "losses"):
            row[key] += int(entry[key])
    if not rows:
        print("fault and load suite: no scenario ran (filtered run)")
        return 0
    print("\nfault and load suite")
    print("| scenario | tests | runs | faults injected | objects checked | losses |")
    print("|---|---|---|---|---|---|")
    for name in sorted(rows):
        r = rows[name]
        print(f"| {name} | {r['tests']} | {r['runs']} | {r['faults']} | {r['objects_checked']} | {r['losses']} |")
    total = {key: sum(r[key] for r in rows.values()) for key in ("tests", "runs", "faults", "objects_checked", "losses")}
    print(f"\nfault and load: {len(rows)} scenarios, {total['tests']} tests, {total['runs']} runs, {total['faults']} faults injected, "
          f"{total['objects_checked']} objects checked, {total['losses']} lost")
    return 1 if total["losses"] else 0


if __name__ == "__main__":
    sys.exit(main())
