#!/usr/bin/env python3
"""Where a bench/faas run's p50 sits: its calls by the major faults their
handler took (0; 1-16, a few pages read back; 17-200; over 200, a cold
call), each group's count, latency p10/p50/p90, handler CPU p50 and how
many came within 2x ideal's p50 (`--within`, ms; 3.4 by default, the
ideal runs of sessions 63-64).

Usage (from the repository root): split.py [--within MS] RUN_DIR..."""
import argparse
import csv
import glob
import os

GROUPS = (("0", 0, 0), ("1-16", 1, 16), ("17-200", 17, 200), ("over 200", 201, 1 << 62))


def q(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p * len(v)))] if v else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--within", type=float, default=3.4, help="ms (default 3.4)")
    ap.add_argument("runs", nargs="+", metavar="RUN_DIR")
    a = ap.parse_args()
    print(f"| run | calls | within {a.within} ms | " + " | ".join(f"{g}: n, p10/p50/p90 ms, CPU p50" for g, _, _ in GROUPS) + " |")
    print("|---|---|---|" + "---|" * len(GROUPS))
    for d in a.runs:
        rows = list(csv.DictReader(open(glob.glob(os.path.join(d, "calls-*.csv"))[0])))
        done = [r for r in rows if r["latency_ms"] and r["majflt"]]
        cells = []
        for _, lo, hi in GROUPS:
            g = [r for r in done if lo <= int(r["majflt"]) <= hi]
            lat = [float(r["latency_ms"]) for r in g]
            cpu = [float(r["handler_cpu_ms"]) for r in g if r.get("handler_cpu_ms")]
            cells.append(f"{len(g)}, {q(lat, .1):.1f}/{q(lat, .5):.1f}/{q(lat, .9):.1f}, {q(cpu, .5):.2f}")
        within = sum(1 for r in done if float(r["latency_ms"]) <= a.within)
        print(f"| {os.path.basename(d.rstrip('/'))} | {len(rows)} | {within} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
