#!/usr/bin/env python3
"""One row per bench/faas memext run: p50, p99, calls within LIMIT ms, warm
calls, cold calls' wake seen (by a kernel event / by a poll: count, median ms
after the call), the daemon's limit writes of a function already at its floor
(`reclaimed` to at most 4.5 MiB in one step, 0 ms), unused while calls waited,
controller CPU. Usage: abrows.py LIMIT_MS RUN_DIR..."""
import csv, sys, os, json, gzip, datetime, collections, statistics as st
lim = float(sys.argv[1])
print("| run | p50 | p99 | within %g ms | warm | seen by event: n, p50 ms | seen by poll: n, p50 ms | floor rewrites | unused while waiting | controller CPU s |" % lim)
print("|---|---|---|---|---|---|---|---|---|---|")
for d in sys.argv[2:]:
    calls = list(csv.DictReader(open(os.path.join(d, 'calls-zram-memext-r0.csv'))))
    r = list(csv.DictReader(open(os.path.join(d, 'results.csv'))))[0]
    fj = json.load(open(os.path.join(d, 'functions-zram-memext-r0.json')))
    t0 = fj['trace_start_epoch']; byc = {v: k for k, v in fj['cgroups'].items()}
    lf = os.path.join(d, 'memext-daemon-zram-r0.log')
    op = open if os.path.exists(lf) else gzip.open
    lf = lf if os.path.exists(lf) else lf + '.gz'
    ev = collections.defaultdict(list); rewrites = 0
    for l in op(lf, 'rt'):
        if not l.startswith('{'): continue
        j = json.loads(l)
        e = j.get('event')
        if e == 'reclaimed' and j.get('to', 1 << 40) <= 4.5 * 2**20 and j.get('steps') == 1 and j.get('ms', 1) < 1:
            rewrites += 1
        if e in ('woke', 'onset') and j.get('context') in byc:
            ts = datetime.datetime.fromisoformat(j['timestamp'].replace('Z', '+00:00')).timestamp() - t0
            ev[byc[j['context']]].append((ts, j.get('via')))
    seen = collections.defaultdict(list)
    for c in calls:
        if int(c['majflt'] or 0) < 100: continue
        t = float(c['t'])
        nx = [e for e in ev[c['function']] if t - 0.05 <= e[0] <= t + 2]
        if nx: seen[nx[0][1]].append((nx[0][0] - t) * 1e3)
    within = sum(1 for c in calls if float(c['latency_ms']) <= lim)
    warm = sum(1 for c in calls if int(c['majflt'] or 0) < 100)
    f = lambda v: "%d, %.0f" % (len(v), st.median(v)) if v else "0, -"
    print(f"| {os.path.basename(d.rstrip('/'))} | {r.get('p50_ms')} | {r.get('p99_ms')} | {within} | {warm} | {f(seen['event'])} | {f(seen['poll'])} | {rewrites} | {r.get('unused_while_waiting_mib')} | {r.get('cpu_controller_s')} |")
