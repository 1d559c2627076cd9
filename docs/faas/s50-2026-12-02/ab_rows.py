#!/usr/bin/env python3
"""One row per mode and round of a bench/faas results directory (run.py's
own rotation, modes side by side in one invocation): p50, p99, calls within
8 ms, warm calls (under timeline.WARM_MAJFLT major faults in the handler),
the timer calls from each function's 4th (`timer from 4`: their p99 and how
many took over 16 ms), the warm calls whose handler mapped pages from the
swap cache (3000 or more minor faults, calltime.py's group), the DRAM left
unused while calls waited, the controller's CPU and the charges at the cap.

Usage (from the repository root): ab_rows.py RUN_DIR..."""
import collections
import csv
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "bench", "faas"))
import results  # noqa: E402
import timeline  # noqa: E402

MAPPED_MINFLT = 3000


def row(d, r):
    _, calls, _ = timeline.load(d, r["tier"], r["mode"], r["round"])
    ok = [c for c in calls if not c["error"]]
    lat = [c["latency_ms"] for c in ok]
    warm = [c for c in ok if int(c["majflt"] or 0) < timeline.WARM_MAJFLT]
    mapped = sum(1 for c in warm if int(c["minflt"] or 0) >= MAPPED_MINFLT)
    seen = collections.Counter()
    timer4 = []
    for c in ok:
        seen[c["function"]] += 1
        if c["class"] == "timer" and seen[c["function"]] >= 4:
            timer4.append(c["latency_ms"])
    return (f"| {os.path.basename(d.rstrip('/'))} | {r['mode']} | {r['round']} | "
            f"{results.nearest_rank(lat, 0.5):.0f} ms | {results.nearest_rank(lat, 0.99):.0f} ms | "
            f"{sum(1 for x in lat if x <= 8)} | {len(warm)} | {results.nearest_rank(timer4, 0.99):.0f} ms | "
            f"{sum(1 for x in timer4 if x > 16)} of {len(timer4)} | {mapped} | {r['unused_while_waiting_mib']} MiB | "
            f"{float(r['cpu_controller_s']):.0f} s | {r['cap_hits']} | {len(calls) - len(ok)} |")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    print("| run | mode | round | p50 | p99 | within 8 ms | warm | timer from 4 p99 | timer from 4 over 16 ms "
          "| warm, mapping in the handler | unused while calls waited | controller CPU | charges at the cap | no answer |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for d in sys.argv[1:]:
        with open(os.path.join(d, "results.csv")) as f:
            for r in csv.DictReader(f):
                print(row(d, r))


if __name__ == "__main__":
    main()
