#!/usr/bin/env python3
"""Cold calls (100 major faults or more) and the read-back of their woken
function: how long after the call it began (sighting + queue), how long it
read, and the calls' latency; the calls whose read-back began over 30 ms
after them.

Usage: coldstart.py RUN_DIR..."""
import csv
import glob
import statistics
import sys

from daemonlog import events

print("| run | cold calls | with a read-back begun within the call | began after the call, median / p90 | read for, median | their latency median / p90 | begun over 30 ms after |")
print("|---|---|---|---|---|---|---|")
for d in sys.argv[1:]:
    reads = {}
    for ts, fn, e in events(d):
        if e.get('event') == 'read-back':
            reads.setdefault(fn, []).append((ts - float(e['seconds']), float(e['seconds'])))
    rows = list(csv.DictReader(open(glob.glob(d + '/calls-*.csv')[0])))
    cold = [r for r in rows if int(r['majflt']) >= 100]
    began, took, lat = [], [], []
    for r in cold:
        t, l = float(r['t']), float(r['latency_ms']) / 1e3
        own = [(s, sec) for s, sec in reads.get(r['function'], []) if t - 0.05 <= s <= t + l]
        if own:
            began.append(1e3 * (own[0][0] - t))
            took.append(1e3 * own[0][1])
            lat.append(1e3 * l)
    q = lambda v, p: sorted(v)[min(len(v) - 1, int(p * len(v)))]
    print(f"| {d.rstrip('/').split('/')[-1]} | {len(cold)} | {len(began)} | {statistics.median(began):.0f} / {q(began, .9):.0f} ms | "
          f"{statistics.median(took):.0f} ms | {statistics.median(lat):.0f} / {q(lat, .9):.0f} ms | {sum(b > 30 for b in began)} |")
