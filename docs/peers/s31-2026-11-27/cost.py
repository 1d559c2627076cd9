#!/usr/bin/env python3
"""What each noise touch cost, and where the critical workload's time went,
per run of bench/peers' burst cells, each row against its own round's ideal.

  python3 cost.py RUN_DIR...

touch: a noise container's re-touch of its whole heap (341 MiB in the full
cells). CPU a touch: the noise containers' and the controller's CPU over the
window divided by the touches that ended in it. critical CPU: the server's and
its load client's CPU-seconds, and the requests (transactions) it served per
CPU-second, both against ideal's in the same round."""
import csv
import glob
import os
import sys


def f(r, k):
    return float(r.get(k) or 0)


def main(dirs):
    print("| run | cell | round | mode | throughput x ideal | p99 x ideal | touches, p50 s | noise + controller CPU-s a touch |"
          " swap in / out MiB a touch | TLB shootdowns a touch | critical CPU-s (x ideal) | work per CPU-s x ideal |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, "*-burst", "results.csv"))):
            rows = list(csv.DictReader(open(path)))
            for rnd in sorted({r["round"] for r in rows}):
                same = [r for r in rows if r["round"] == rnd]
                ideal = next((r for r in same if r["mode"] == "ideal"), None)
                if ideal is None:
                    continue
                cpu_i = f(ideal, "cpu_critical_s") + f(ideal, "cpu_client_s")
                work_i = f(ideal, "throughput") * f(ideal, "window_s") / cpu_i
                for r in same:
                    if r["mode"] == "ideal" or r.get("failed"):
                        continue
                    n = f(r, "noise_ops") or 1
                    cpu = f(r, "cpu_critical_s") + f(r, "cpu_client_s")
                    work = f(r, "throughput") * f(r, "window_s") / cpu / work_i
                    print(f"| {os.path.basename(os.path.normpath(d))} | {os.path.basename(os.path.dirname(path))} | {rnd} | {r['mode']} "
                          f"| {f(r, 'throughput') / f(ideal, 'throughput'):.2f}x | {f(r, 'p99') / f(ideal, 'p99'):.2f}x "
                          f"| {f(r, 'noise_ops'):.0f}, {f(r, 'noise_p50') / 1000:.1f} "
                          f"| {f(r, 'cpu_noise_s') / n:.2f} + {f(r, 'cpu_controller_s') / n:.2f} "
                          f"| {f(r, 'swapin_mib') / n:.0f} / {f(r, 'swapout_mib') / n:.0f} "
                          f"| {f(r, 'tlb_shootdowns') / n / 1000:.1f}k | {cpu:.1f} ({cpu / cpu_i:.2f}x) | {work:.2f}x |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
