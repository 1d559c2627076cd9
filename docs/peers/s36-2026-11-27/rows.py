#!/usr/bin/env python3
"""The rows of bench/peers' grow cells, each against its own invocation's
ideal: the critical workload's throughput and p99, the grow jobs that ended
in the window and their p50 (a job's time from its first allocation to its
end, waits included), swap traffic, TLB shootdowns, the controller's CPU and
the server's mean DRAM.

  python3 rows.py RUN_DIR..."""
import csv
import glob
import os
import sys


def f(r, k):
    return float(r.get(k) or 0)


def main(dirs):
    print("| run | cell | mode | throughput x ideal | p99 x ideal | jobs, p50 s | swap in / out MiB |"
          " TLB shootdowns | controller CPU-s | DRAM mean MiB |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, "*-grow", "results.csv"))):
            rows = list(csv.DictReader(open(path)))
            ideal = next((r for r in rows if r["mode"] == "ideal"), None)
            if ideal is None:
                continue
            for r in rows:
                if r.get("failed"):
                    continue
                jobs = f(r, "noise_ops")
                p50 = f"{f(r, 'noise_p50') / 1000:.1f}" if jobs else "-"
                print(f"| {os.path.basename(os.path.normpath(d))} | {os.path.basename(os.path.dirname(path))} | {r['mode']} "
                      f"| {f(r, 'throughput') / f(ideal, 'throughput'):.2f}x | {f(r, 'p99') / f(ideal, 'p99'):.2f}x "
                      f"| {jobs:.0f}, {p50} | {f(r, 'swapin_mib'):.0f} / {f(r, 'swapout_mib'):.0f} "
                      f"| {f(r, 'tlb_shootdowns'):,.0f} | {f(r, 'cpu_controller_s'):.1f} | {f(r, 'dram_mean_mib'):.0f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
