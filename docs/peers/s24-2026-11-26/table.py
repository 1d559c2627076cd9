#!/usr/bin/env python3
"""Each run's rows as the README quotes them: critical throughput and p99
against the ideal of the same round, the noise's wake p50/p99, swap-in, the
TLB shootdowns of the window (where recorded), the critical container's major
faults, DRAM mean. Usage: table.py RUN_DIR... (each a bench/peers results
directory with postgres-burst/ or redis-burst/)."""
import csv
import os
import sys


def rows(run):
    for cell in sorted(os.listdir(run)):
        path = os.path.join(run, cell, "results.csv")
        if os.path.isfile(path):
            with open(path) as f:
                yield cell, list(csv.DictReader(f))


def num(r, k):
    v = r.get(k)
    return None if v in (None, "") else float(v)


def main(runs):
    print("| run | cell | round | mode | tx/s (x ideal) | p99 ms (x ideal) | noise p50 / p99 s | swap in MiB "
          "| TLB shootdowns | critical major faults | DRAM mean MiB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for run in runs:
        for cell, rs in rows(run):
            ideal = {r["round"]: r for r in rs if r["mode"] == "ideal" and not r.get("failed")}
            for r in sorted(rs, key=lambda r: (int(r["round"]), r["mode"] != "ideal", r["mode"] != "oracle", r["mode"])):
                if r.get("failed"):
                    print(f"| {os.path.basename(run)} | {cell} | {r['round']} | {r['mode']} | failed: {r['failed'][:60]} |")
                    continue
                i = ideal.get(r["round"])
                x = lambda k: f" ({num(r, k) / num(i, k):.2f}x)" if i and r["mode"] != "ideal" else ""  # noqa: E731
                tlb = num(r, "tlb_shootdowns")
                print(f"| {os.path.basename(run)} | {cell} | {r['round']} | {r['mode']} | {num(r, 'throughput'):,.0f}{x('throughput')} "
                      f"| {num(r, 'p99'):.2f}{x('p99')} | {num(r, 'noise_p50') / 1000:.2f} / {num(r, 'noise_p99') / 1000:.2f} "
                      f"| {num(r, 'swapin_mib'):,.0f} | {'-' if tlb is None else f'{tlb:,.0f}'} "
                      f"| {num(r, 'crit_majflt'):,.0f} | {num(r, 'dram_mean_mib'):,.0f} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
