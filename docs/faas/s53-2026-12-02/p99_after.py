#!/usr/bin/env python3
"""Each run's p99 over all calls, and over the calls from SECONDS into the
trace on (default 10): the trace's first seconds come while memext still
pushes out the functions started before it, and in some runs make the
p99 alone. Also how many of the run's 6 slowest calls came before then.

Usage: p99_after.py [--seconds S] RUN_DIR..."""
import argparse
import csv
import glob
import os


def pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = min(len(xs) - 1, max(0, int(round(q * (len(xs) - 1)))))
    return xs[k]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    print(f"| run | mode | round | p99 | p99 from {a.seconds:g} s | of the 6 slowest, before {a.seconds:g} s |")
    print("|---|---|---|---|---|---|")
    for d in a.dirs:
        for f in sorted(glob.glob(os.path.join(d, "calls-*.csv"))):
            name = os.path.basename(f)[len("calls-"):-len(".csv")]
            _tier, rest = name.split("-", 1)
            mode, rnd = rest.rsplit("-r", 1)
            rows = [r for r in csv.DictReader(open(f)) if not r["error"]]
            lat = [float(r["latency_ms"]) for r in rows]
            late = [float(r["latency_ms"]) for r in rows if float(r["t"]) >= a.seconds]
            slow = sorted(rows, key=lambda r: -float(r["latency_ms"]))[:6]
            early = sum(1 for r in slow if float(r["t"]) < a.seconds)
            print(f"| {os.path.basename(os.path.normpath(d))} | {mode} | {rnd} | {pct(lat, 0.99):.0f} ms | {pct(late, 0.99):.0f} ms | {early} |")


if __name__ == "__main__":
    main()
