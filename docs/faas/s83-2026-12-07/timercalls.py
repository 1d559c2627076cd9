#!/usr/bin/env python3
"""The timer functions' calls of bench/faas runs by their ordinal (first,
second, third, fourth and later): how many, how many took 4 ms or more
(twice ideal's p50), their median and the three slowest.

Usage: timercalls.py RUN_DIR... (bench/faas results directories)"""
import collections
import csv
import glob
import gzip
import os
import statistics
import sys


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    for d in sys.argv[1:]:
        for path in sorted(glob.glob(os.path.join(d, "calls-*.csv*"))):
            with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
                rows = sorted(csv.DictReader(f), key=lambda r: float(r["t"]))
            seen = collections.Counter()
            by_ordinal = collections.defaultdict(list)
            for r in rows:
                if r["class"] == "timer" and not r["error"]:
                    seen[r["function"]] += 1
                    by_ordinal[min(seen[r["function"]], 4)].append(float(r["latency_ms"]))
            print(f"{d} ({os.path.basename(path)})")
            for i in sorted(by_ordinal):
                v = sorted(by_ordinal[i])
                print(f"  call {i}{'+' if i == 4 else ''}: {len(v)}, {sum(x >= 4 for x in v)} at 4 ms or more, "
                      f"median {statistics.median(v):.1f} ms, slowest {v[-3:]}")


if __name__ == "__main__":
    main()
