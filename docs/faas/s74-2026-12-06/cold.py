#!/usr/bin/env python3
"""Cold calls (over 200 major faults) per run: first calls of a function, then the later calls by class, and
the warm calls left.

    python3 cold.py RUN_DIR...
"""
import collections
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "s72-2026-12-05"))
import runlog  # noqa: E402

print("| run | first calls cold | later Poisson cold | later bursty cold | later timer cold | warm |")
print("|---|---|---|---|---|---|")
for run in sys.argv[1:]:
    cold, all_ = collections.Counter(), collections.Counter()
    for rows in runlog.calls(run).values():
        for k, r in enumerate(rows):
            kind = "first" if k == 0 else r["class"]
            all_[kind] += 1
            cold[kind] += int(r["majflt"]) > 200
    cells = [f"{cold[k]} of {all_[k]}" for k in ("first", "poisson", "bursty", "timer")]
    print(f"| {os.path.basename(run.rstrip('/'))} | " + " | ".join(cells) +
          f" | {sum(all_.values()) - sum(cold.values())} |")
