#!/usr/bin/env python3
"""Session 85: the `limits` peer's calls by each function's static limit
(bench/faas host.static_limits: the cap split in proportion to heap + 12
MiB), to see whether the functions whose limit is below their
interpreter's 12-13 MiB pay for it in their calls (their latency per MiB of
heap against the others'). Usage: limitcalls.py RUN_DIR [TIER]"""
import csv
import json
import os
import statistics
import sys

BASE_MIB = 12  # as run.py counts a function's memory besides its heap


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    run, tier = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "zram"
    p = json.load(open(os.path.join(run, "params.json")))
    heaps = p["heaps_mib"]
    total_mib = sum(h + BASE_MIB for h in heaps)
    cap = p["params"]["cap"] / 2**20 if "cap" in p["params"] else p["params"]["cap_share"] * total_mib
    total = sum(h + BASE_MIB for h in heaps)
    groups = {}
    for r in csv.DictReader(open(os.path.join(run, f"calls-{tier}-limits-r0.csv"))):
        if r["error"]:
            continue
        h = heaps[int(r["function"][2:])]
        limit = cap * (h + BASE_MIB) / total
        band = "below 13 MiB" if limit < 13 else "13 MiB or more"
        groups.setdefault(band, []).append((float(r["latency_ms"]) / h, int(r["majflt"]) / (h * 256)))
    print(f"\n{run}, {tier}:\n")
    print("| limit | calls | ms per MiB of heap, median (p90) | major faults per heap page, median |")
    print("|---|---|---|---|")
    for band, v in sorted(groups.items()):
        ms = sorted(x for x, _ in v)
        print(f"| {band} | {len(v)} | {statistics.median(ms):.2f} ({ms[int(0.9 * len(ms))]:.2f}) "
              f"| {statistics.median(f for _, f in v):.2f} |")


if __name__ == "__main__":
    main()
