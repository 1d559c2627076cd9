#!/usr/bin/env python3
"""Per run of an A/B directory: the capped parent's samples (caploop.sh's
cap-N.csv.gz, N in the order of ab.log's runs) split at the trace's start:
the cap's hits (failcnt) during the fill and during the trace, and the
parent's mean usage and swap cache in each. Usage: fillhits.py AB_DIR"""
import glob
import gzip
import json
import os
import re
import statistics
import sys

MIB = 1 << 20


def rows(path):
    with gzip.open(path, "rt") as f:
        head = f.readline().strip().split(",")
        for line in f:
            v = line.strip().split(",")
            if len(v) == len(head):
                yield dict(zip(head, map(float, v)))


def main():
    ab = sys.argv[1]
    runs = [m.group(1) for m in re.finditer(r"^\S+ (\S+-r\d+)$", open(os.path.join(ab, "ab.log")).read(), re.M)]
    print("| run | fill hits | trace hits | fill: mean usage / swap cache MiB | trace: mean usage / swap cache MiB |")
    print("|---|---|---|---|---|")
    for n, run in enumerate(runs, 1):
        cap = os.path.join(ab, f"cap-{n}.csv.gz")
        meta = glob.glob(os.path.join(ab, run, "functions-*.json"))
        if not (os.path.exists(cap) and meta):
            continue
        t0 = json.load(open(meta[0]))["trace_start_epoch"]
        rs = [r for r in rows(cap) if r["usage"] > 0]
        fill = [r for r in rs if r["epoch"] < t0]
        trace = [r for r in rs if t0 <= r["epoch"] <= t0 + 180]
        if not fill or not trace:
            continue

        def mean(xs, k):
            return statistics.mean(r[k] for r in xs) / MIB
        print(f"| {run} | {trace[0]['failcnt'] - fill[0]['failcnt']:.0f} | {trace[-1]['failcnt'] - trace[0]['failcnt']:.0f} "
              f"| {mean(fill, 'usage'):.0f} / {mean(fill, 'total_swapcached'):.0f} "
              f"| {mean(trace, 'usage'):.0f} / {mean(trace, 'total_swapcached'):.0f} |")


if __name__ == "__main__":
    main()
