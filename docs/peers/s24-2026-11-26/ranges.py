#!/usr/bin/env python3
"""The README's session-24 table: per mode over the given runs, the range and
median of each figure (throughput and p99 against the same round's ideal).
Usage: ranges.py RUN_DIR... [--cell postgres-burst]"""
import csv
import os
import statistics
import sys


def main(args):
    cell = "postgres-burst"
    if "--cell" in args:
        i = args.index("--cell")
        cell, args = args[i + 1], args[:i] + args[i + 2:]
    by_mode = {}
    for run in args:
        with open(os.path.join(run, cell, "results.csv")) as f:
            rs = [r for r in csv.DictReader(f) if not r.get("failed")]
        ideal = {r["round"]: r for r in rs if r["mode"] == "ideal"}
        for r in rs:
            i = ideal.get(r["round"])
            if r["mode"] == "ideal" or not i:
                continue
            v = by_mode.setdefault(r["mode"], {k: [] for k in ("tput", "p99", "noise_p50", "tlb", "majflt", "swapin")})
            v["tput"].append(float(r["throughput"]) / float(i["throughput"]))
            v["p99"].append(float(r["p99"]) / float(i["p99"]))
            v["noise_p50"].append(float(r["noise_p50"]) / 1000)
            if r.get("tlb_shootdowns"):
                v["tlb"].append(float(r["tlb_shootdowns"]) / 1000)
            v["majflt"].append(float(r["crit_majflt"]))
            v["swapin"].append(float(r["swapin_mib"]) / 1024)
    for mode, v in by_mode.items():
        n = len(v["tput"])
        met = sum(1 for t, p in zip(v["tput"], v["p99"]) if t >= 0.85 and p <= 1.5)
        line = [f"{mode} ({n} rounds, both targets met in {met}, p99 <= 1.5x in {sum(p <= 1.5 for p in v['p99'])}, "
                f"throughput >= 0.85x in {sum(t >= 0.85 for t in v['tput'])})"]
        for k, fmt in (("tput", ".2f"), ("p99", ".2f"), ("noise_p50", ".2f"), ("tlb", ".1f"), ("majflt", ".0f"),
                       ("swapin", ".2f")):
            xs = v[k]
            if xs:
                line.append(f"  {k}: {min(xs):{fmt}}-{max(xs):{fmt}} (median {statistics.median(xs):{fmt}})")
        print("\n".join(line))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
