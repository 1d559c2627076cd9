#!/usr/bin/env python3
"""How much of the reclaimer's lowering (its `reclaimed` events that took 1
ms or more) ran beside a bench/faas memext run's cold calls (100 major
faults or more), lowering another function than the one called.
Usage: beside.py RUN_DIR..."""
import csv, datetime, gzip, json, os, sys

for d in sys.argv[1:]:
    meta = json.load(open(os.path.join(d, 'functions-zram-memext-r0.json')))
    st, inv = meta['trace_start_epoch'], {v: k for k, v in meta['cgroups'].items()}
    rows = list(csv.DictReader(open(os.path.join(d, 'calls-zram-memext-r0.csv'))))
    cold = [(float(r['t']), float(r['t']) + float(r['latency_ms']) / 1e3, r['function'])
            for r in rows if int(r['majflt'] or 0) >= 100]
    log = os.path.join(d, 'memext-daemon-zram-r0.log')
    f = open(log) if os.path.exists(log) else gzip.open(log + '.gz', 'rt')
    rec = []
    for line in f:
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get('event') == 'reclaimed' and e.get('ms', 0) >= 1:
            t = datetime.datetime.fromisoformat(e['timestamp'].replace('Z', '+00:00')).timestamp() - st
            rec.append((t - e['ms'] / 1e3, t, inv.get(e['context'])))
    total = sum(b - a for a, b, _ in rec if 0 < a < 185)
    beside, calls = 0.0, 0
    for a, b, fn in cold:
        ov = sum(max(0.0, min(b, y) - max(a, x)) for x, y, g in rec if g != fn)
        beside += ov
        calls += ov > 0
    print(f"{os.path.basename(d.rstrip('/'))}: reclaim in the trace {total:.1f} s, beside cold calls {beside:.1f} s; "
          f"cold calls with another function lowered beside them: {calls} of {len(cold)}")
