#!/usr/bin/env python3
"""The floor A/B's rows: each memext run of the given bench/faas result
directories (calls-TIER-MODE-rN.csv), in the order they ran (results.csv),
with the calls within 8 ms and the warm ones (under 100 major faults in the
handler; on the swap file a call reads its pages back as minor faults, so
there `warm` says little).

Usage (from the repository root): floor_table.py RUN_DIR..."""
import csv
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "bench", "faas"))
import results  # noqa: E402


def main():
    print("| run | tier | mode | round | p50 | p99 | within 8 ms | warm | no answer |")
    print("|---|---|---|---|---|---|---|---|---|")
    for d in sys.argv[1:]:
        with open(os.path.join(d, "results.csv")) as f:
            order = [(r["tier"], r["mode"]) for r in csv.DictReader(f)]
        seen = {}
        for tier, mode in order:
            if not mode.startswith("memext"):
                continue
            rnd = seen.get((tier, mode), 0)
            seen[(tier, mode)] = rnd + 1
            with open(os.path.join(d, f"calls-{tier}-{mode}-r{rnd}.csv")) as f:
                calls = list(csv.DictReader(f))
            lat = [float(c["latency_ms"]) for c in calls if not c["error"]]
            warm = sum(1 for c in calls if not c["error"] and int(c["majflt"] or 0) < 100)
            fast = sum(1 for x in lat if x <= 8)
            print(f"| {os.path.basename(d.rstrip('/'))} | {tier} | {mode} | {rnd + 1} | "
                  f"{results.nearest_rank(lat, 0.5):.0f} ms | {results.nearest_rank(lat, 0.99):.0f} ms | "
                  f"{fast} of {len(calls)} | {warm} | {len(calls) - len(lat)} |")


if __name__ == "__main__":
    main()
