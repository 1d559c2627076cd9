#!/usr/bin/env python3
"""How fast the machine ran during each bench/faas run: the median handler CPU
time of its warm calls (no major fault, under 10 minor ones: the same pages
read each time, so only the CPU's speed and the TLB's state change it), beside
the run's calls within 8 ms and its cold calls' median.

Usage: speed.py RUN_DIR..."""
import csv
import glob
import statistics
import sys

print("| run | warm calls | their handler CPU, median | their latency, median | within 8 ms | cold calls' median |")
print("|---|---|---|---|---|---|")
for d in sys.argv[1:]:
    rows = list(csv.DictReader(open(glob.glob(d + '/calls-*.csv')[0])))
    warm = [r for r in rows if int(r['majflt']) == 0 and int(r['minflt']) < 10]
    cold = [float(r['latency_ms']) for r in rows if int(r['majflt']) >= 100]
    med = lambda k: statistics.median(float(r[k]) for r in warm)
    within = sum(float(r['latency_ms']) <= 8 for r in rows if not r['error'])
    print(f"| {d.rstrip('/').split('/')[-1]} | {len(warm)} | {med('handler_cpu_ms'):.2f} ms | "
          f"{med('latency_ms'):.2f} ms | {within} | {f'{statistics.median(cold):.0f} ms' if cold else '-'} |")
