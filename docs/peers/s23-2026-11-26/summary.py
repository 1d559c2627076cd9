#!/usr/bin/env python3
"""Session 23's runs of issue 15's scenario, one line per mode and round:
the critical workload against its round's ideal, the noise's wakes, swap
traffic, and (with --cpu-profile) CPU-seconds by who and by what.
Usage: summary.py RUN_DIR..."""
import csv
import json
import os
import sys


def rows(run):
    with open(os.path.join(run, "postgres-burst", "results.csv")) as f:
        return list(csv.DictReader(f))


def profile(run, mode, rnd):
    p = os.path.join(run, "postgres-burst", "histograms", f"{mode}-r{rnd}-cpu.json")
    if not os.path.exists(p):
        return None
    with open(p) as f:
        return json.load(f)["seconds"]


def main(runs):
    print("run mode round | tx/s (x ideal) p99 ms (x ideal) | noise wake p50/p99 s | swap in/out MiB | "
          "CPU-s critical+client / noise / memext (other) | noise: charge reclaim, swap-in faults | memext: read-back, limit writes, page-out")
    for run in runs:
        rs = rows(run)
        ideal = {r["round"]: r for r in rs if r["mode"] == "ideal" and float(r["throughput"] or 0) > 0}
        for r in rs:
            i = ideal.get(r["round"])
            tput, p99 = float(r["throughput"] or 0), float(r["p99"] or 0)
            vs = (f"({tput / float(i['throughput']):.2f}x) {p99:.2f} ({p99 / float(i['p99']):.2f}x)"
                  if i and r is not i else f"{p99:.2f}")
            if r.get("failed"):
                print(f"{os.path.basename(run.rstrip('/'))} {r['mode']} {r['round']} | failed: {r['failed']}")
                continue
            line = (f"{os.path.basename(run.rstrip('/'))} {r['mode']} {r['round']} | {tput:,.0f} {vs} | "
                    f"{float(r['noise_p50']) / 1e3:.2f}/{float(r['noise_p99']) / 1e3:.2f} | "
                    f"{float(r['swapin_mib']):.0f}/{float(r['swapout_mib']):.0f}")
            s = profile(run, r["mode"], r["round"])
            if s:
                tot = lambda w: sum(s.get(w, {}).values())  # noqa: E731
                n, c = s.get("noise", {}), s.get("controller", {})
                line += (f" | {tot('critical') + tot('client'):.1f} / {tot('noise'):.1f} / {tot('controller'):.1f}"
                         f" ({tot('other'):.1f}) | {n.get('reclaim: charge', 0):.2f}, {n.get('swap-in fault', 0):.2f}"
                         f" | {c.get('read-back (madvise)', 0):.2f}, {c.get('reclaim: limit write', 0):.2f}, "
                         f"{c.get('push-out (madvise)', 0):.2f}")
            print(line)


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        sys.exit(__doc__)
    main(sys.argv[1:])
