#!/usr/bin/env python3
"""Reads capsample.py's CSV beside a bench/faas run directory: over the trace,
how much of the capped parent's usage was swap cache and writeback, and how
the cap's hits (failcnt) fell against them, per 10 s and in total.

Usage: captab.py CAP.csv RUN_DIR
"""
import glob
import json
import statistics
import sys

MIB = 1 << 20


def load(path):
    rows = []
    with open(path) as f:
        head = f.readline().strip().split(",")
        for line in f:
            v = line.strip().split(",")
            if len(v) == len(head):
                rows.append(dict(zip(head, map(float, v))))
    return rows


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def main():
    cap_csv, run = sys.argv[1], sys.argv[2]
    meta = json.load(open(glob.glob(f"{run}/functions-*.json")[0]))
    t0 = meta["trace_start_epoch"]
    rows = [r for r in load(cap_csv) if t0 <= r["epoch"] <= t0 + 180]
    print(f"{len(rows)} samples over the trace")
    hits_total = rows[-1]["failcnt"] - rows[0]["failcnt"]
    print(f"cap hits over the trace: {hits_total:.0f}")
    # Hits against the swap cache at the sample before them.
    by_sc = {}
    for a, b in zip(rows, rows[1:]):
        bucket = int(a["total_swapcached"] / MIB // 50) * 50
        h, n = by_sc.get(bucket, (0, 0))
        by_sc[bucket] = (h + b["failcnt"] - a["failcnt"], n + 1)
    print("swap cache MiB | samples | cap hits | hits a sample")
    for k in sorted(by_sc):
        h, n = by_sc[k]
        print(f"{k:>4}-{k + 50:<4} | {n} | {h:.0f} | {h / n:.1f}")
    for key in ("usage", "total_swapcached", "total_writeback", "total_dirty", "total_rss", "total_cache"):
        xs = [r[key] / MIB for r in rows]
        print(f"{key}: median {statistics.median(xs):.0f} MiB, p90 {pct(xs, 0.9):.0f}, max {max(xs):.0f}")
    print("second | usage | limit | swapcached | writeback | hits")
    for s in range(0, 180, 10):
        w = [r for r in rows if t0 + s <= r["epoch"] < t0 + s + 10]
        if len(w) < 2:
            continue
        print(f"{s:>3} | {statistics.mean(r['usage'] for r in w) / MIB:.0f} | {w[0]['limit'] / MIB:.0f} | "
              f"{statistics.mean(r['total_swapcached'] for r in w) / MIB:.0f} | "
              f"{statistics.mean(r['total_writeback'] for r in w) / MIB:.0f} | {w[-1]['failcnt'] - w[0]['failcnt']:.0f}")


if __name__ == "__main__":
    main()
