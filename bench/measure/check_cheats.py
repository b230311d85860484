#!/usr/bin/env python3
"""Compares the cheat suite's results (kmcts measure --jsonl) with tests/cuda_cheats/expected.json.
Usage: check_cheats.py EXPECTED.json RESULTS.jsonl; exit 1 when a cheat is not caught as expected."""
import json
import os
import sys

expected = json.load(open(sys.argv[1]))
results = {}
for line in open(sys.argv[2]):
    r = json.loads(line)
    results[os.path.basename(r["source"])] = r
caught = 0
for e in expected:
    r = results.get(e["file"])
    if r is None:
        print(f"MISSING {e['file']}: no result")
        continue
    rule = r.get("details", {}).get("rule")
    ok = r["verdict"] in e["verdicts"] and ("rule" not in e or rule == e["rule"])
    caught += ok
    print(f"{'caught ' if ok else 'MISSED '} {e['file']:22} {r['verdict']:13} {rule or '':15} {r['message'][:100]}")
print(f"{caught}/{len(expected)} cheats caught as expected")
sys.exit(0 if caught == len(expected) else 1)
