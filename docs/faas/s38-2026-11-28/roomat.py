#!/usr/bin/env python3
"""A bench/faas memext run's cold calls (100 major faults or more) by the
room the parent had free at its DRAM sample before each (every 0.5 s), and
what each cost a MiB of its heap. Usage: roomat.py RUN_DIR"""
import sys, os, json, csv, bisect, statistics as st
d = sys.argv[1]
p = json.load(open(os.path.join(d, 'params.json')))
heaps = p['heaps_mib']; cap = p['params']['cap'] / 2**20
ser = json.load(open(os.path.join(d, 'series.json')))
key = [k for k in ser if 'memext' in k][0]
s = ser[key]; ts = [x[0] for x in s]
calls = list(csv.DictReader(open(os.path.join(d, 'calls-zram-memext-r0.csv'))))
rows = []
for c in calls:
    if int(c['majflt'] or 0) < 100: continue
    t = float(c['t']); i = bisect.bisect_right(ts, t) - 1
    if i < 0: continue
    free = cap - s[i][1] / 2**20
    h = heaps[int(c['function'][2:])]
    rows.append((free, h, float(c['latency_ms'])))
print(key, 'cap', round(cap), 'free at samples p10/p50/p90', [round(x) for x in st.quantiles([cap - b / 2**20 for _, b in s], n=10)[::4]])
for name, lo, hi in (('under 16', -1e9, 16), ('16-48', 16, 48), ('48-96', 48, 96), ('96 or more', 96, 1e9)):
    g = [r for r in rows if lo <= r[0] < hi]
    if g:
        print(f'free {name:>10} MiB: {len(g):3d} cold calls, ms/MiB p50 {st.median(r[2] / r[1] for r in g):.2f}, latency p50 {st.median(r[2] for r in g):.0f} ms')
