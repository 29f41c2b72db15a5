#!/usr/bin/env python3
"""Prints the fault and load suite's figures from the ledger the tests wrote (one JSON object a line):
a table by scenario, then one closing line. Exits 1 when any loss, secret found or crash was recorded, 0 otherwise.

Columns: cases are generated or borrowed inputs tried against a promise (property, differential, fuzz tests);
losses are referenced objects deleted, half-applied or twice-recorded migrations, unanswered requests; secrets
are known secrets seen in anything Steward printed or stored; crashes are processes that trapped. A check
("kind": "check": a parser, a round trip, a scan for secrets) has nothing it could lose: its losses show as "-" and
the closing line counts losses only over the scenarios that can lose something.

    scripts/fault-report.py LEDGER
"""
import json
import sys
from collections import OrderedDict

KEYS = ("cases", "runs", "faults", "objects_checked", "losses", "secrets_found", "crashes")


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
        row = rows.setdefault(entry["scenario"], dict(dict.fromkeys(("tests",) + KEYS, 0), check=True))
        row["tests"] += 1
        # A scenario is a check only while every one of its lines is: one line that can lose makes it count.
        row["check"] = row["check"] and entry.get("kind") == "check"
        for key in KEYS:
            row[key] += int(entry.get(key, 0))
    if not rows:
        print("fault and load suite: no scenario ran (filtered run)")
        return 0
    print("\nfault and load suite")
    print("| scenario | tests | cases | runs | faults injected | objects checked | losses | secrets found | crashes |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in sorted(rows):
        r = rows[name]
        print(f"| {name} | {r['tests']} | " + " | ".join("-" if key == "losses" and r["check"] else str(r[key]) for key in KEYS) + " |")
    total = {key: sum(r[key] for r in rows.values()) for key in ("tests",) + KEYS}
    checks = sum(1 for r in rows.values() if r["check"])
    print(f"\nfault and load: {len(rows)} scenarios ({checks} checks with nothing to lose), {total['tests']} tests, "
          f"{total['cases']} cases tried, {total['runs']} runs, {total['faults']} faults injected, {total['objects_checked']} objects checked, "
          f"{total['losses']} lost in {len(rows) - checks} scenarios that can lose, "
          f"{total['secrets_found']} secrets found, {total['crashes']} crashes")
    return 1 if total["losses"] or total["secrets_found"] or total["crashes"] else 0


if __name__ == "__main__":
    sys.exit(main())
