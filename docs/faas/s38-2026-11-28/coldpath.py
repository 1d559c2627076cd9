#!/usr/bin/env python3
"""Where a cold call's time goes: for each cold call (100 major faults or
more), the wake's detection (call -> woke/onset/bringing-back), the
read-back's start (after the wake) and its rate, from a bench/faas memext
run on zram (its calls, its daemon's log). Usage: coldpath.py RUN_DIR..."""
import sys, os, re, statistics as st, json
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'bench', 'faas'))
import timeline as tl
def q(v, p):
    v = sorted(v); return v[min(len(v) - 1, int(p * len(v)))] if v else float('nan')
for d in sys.argv[1:]:
    meta, calls, events = tl.load(d, 'zram', 'memext', 0)
    heaps = json.load(open(os.path.join(d, 'params.json')))['heaps_mib']
    inv = {v: k for k, v in meta['cgroups'].items()}
    by_fn = {inv[c]: ev for c, ev in events.items()}
    rows = []
    cold = [c for c in calls if tl.warmth(c) == 'cold']
    for c in cold:
        ev = by_fn.get(c['function'], [])
        t = c['t']; end = t + c['latency_ms'] / 1e3
        wake = next((e for e in ev if t - 0.05 <= e[0] <= end + 0.5 and e[1] in ('woke', 'onset', 'bringing-back')), None)
        rb = None
        for e in ev:
            if e[1] == 'read-back' and e[0] >= t:
                m = re.match(r'(\d+) MiB in (\d+) ms', e[2]); mib, ms = int(m[1]), int(m[2])
                start = e[0] - ms / 1e3
                if start <= end + 0.2: rb = (start, mib, ms)
                break
        others = sum(1 for o in cold if o is not c and t - 0.5 < o['t'] < end)
        rows.append(dict(lat=c['latency_ms'], heap=heaps[int(c['function'][2:])], mf=int(c['majflt']),
                         det=(wake[0] - t) * 1e3 if wake else None,
                         rbstart=(rb[0] - t) * 1e3 if rb else None, rbmib=rb[1] if rb else 0, rbms=rb[2] if rb else None,
                         others=others))
    n = len(rows)
    det = [r['det'] for r in rows if r['det'] is not None]
    rbs = [r['rbstart'] for r in rows if r['rbstart'] is not None]
    rate = [r['rbmib'] / r['rbms'] * 1e3 for r in rows if r['rbms']]
    print(f"{os.path.basename(d)}: cold {n}; wake seen {len(det)} (ms after the call p50 {q(det,.5):.0f} p90 {q(det,.9):.0f}); "
          f"read-back in the call {len(rbs)} (start p50 {q(rbs,.5):.0f} p90 {q(rbs,.9):.0f} ms; MiB/s p50 {q(rate,.5):.0f} p10 {q(rate,.1):.0f}); "
          f"latency p50 {q([r['lat'] for r in rows],.5):.0f}, alone {q([r['lat'] for r in rows if r['others']==0],.5):.0f} (n {sum(1 for r in rows if r['others']==0)}), "
          f"faulted share p50 {q([r['mf']*4/1024/r['heap'] for r in rows],.5):.2f}")
    for lo, hi in ((0, 60), (60, 120), (120, 250), (250, 10000)):
        s = [r for r in rows if lo <= r['lat'] < hi]
        if s:
            print(f"   {lo}-{hi} ms: {len(s)} calls, det p50 {q([r['det'] for r in s if r['det'] is not None],.5):.0f}, rb start p50 {q([r['rbstart'] for r in s if r['rbstart'] is not None],.5):.0f}, "
                  f"rb ms p50 {q([r['rbms'] for r in s if r['rbms']],.5):.0f}, rb MiB p50 {q([r['rbmib'] for r in s],.5):.0f}, heap p50 {q([r['heap'] for r in s],.5)}, others p50 {q([r['others'] for r in s],.5)}")
