#!/usr/bin/env python3
"""Session 76: daemon.move_group on against off, paired by run and round,
per bench/peers cell: the critical workload's throughput and p99, the
noise's operations and p50, the controller's CPU.

Usage: paired.py RUN_DIR [RUN_DIR ...]   (bench/peers output directories)
"""
import csv
import statistics
import sys
from pathlib import Path

ON, OFF = "memext+daemon.move_group=true", "memext+daemon.move_group=false"
CELLS = ["redis-fetch", "redis-burst", "redis-grow", "postgres-fetch", "postgres-burst", "postgres-grow"]


def pairs(runs):
    """{cell: [(on_row, off_row), ...]} over every run and round."""
    out = {c: [] for c in CELLS}
    for run in runs:
        for cell in CELLS:
            f = Path(run) / cell / "results.csv"
            if not f.exists():
                continue
            rows = list(csv.DictReader(f.open()))
            for rnd in sorted({r["round"] for r in rows}):
                by = {r["mode"]: r for r in rows if r["round"] == rnd and not r["failed"]}
                if ON in by and OFF in by:
                    out[cell].append((by[ON], by[OFF]))
    return out


def each(key, rows, digits=0):
    """Column `key` of each row."""
    return " / ".join(f"{float(r[key]):,.{digits}f}" if r[key] else "-" for r in rows)


def main():
    runs = sys.argv[1:]
    if not runs:
        sys.exit(__doc__)
    print("| cell | pairs | throughput on / off (ratio each pair) | p99 ms on / off | noise ops on / off | noise p50 ms on / off | controller CPU s on / off |")
    print("|---|---|---|---|---|---|---|")
    for cell, ps in pairs(runs).items():
        if not ps:
            continue
        on = [a for a, _ in ps]
        off = [b for _, b in ps]
        ratios = [float(a["throughput"]) / float(b["throughput"]) for a, b in ps]
        better = sum(x > 1 for x in ratios)
        print(f"| {cell} | {len(ps)} | {each('throughput', on)} against {each('throughput', off)} "
              f"({', '.join(f'{x:.2f}' for x in ratios)}; median {statistics.median(ratios):.2f}, higher in {better}) "
              f"| {each('p99', on, 2)} against {each('p99', off, 2)} "
              f"| {each('noise_ops', on)} against {each('noise_ops', off)} "
              f"| {each('noise_p50', on)} against {each('noise_p50', off)} "
              f"| {each('cpu_controller_s', on, 1)} against {each('cpu_controller_s', off, 1)} |")


if __name__ == "__main__":
    main()
