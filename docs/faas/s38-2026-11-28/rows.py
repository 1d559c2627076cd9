#!/usr/bin/env python3
"""One row per bench/faas memext run: p50, p99, calls within 2x ideal's p50
(LIMIT ms), warm calls, timer from call 4 p99, unused while waiting, cap
hits, controller CPU. Usage: rows.py LIMIT_MS RUN_DIR..."""
import csv, sys, os
lim = float(sys.argv[1])
print("| run | p50 | p99 | calls within %g ms | warm calls | timer from call 4 p99 | unused while calls waited | cap hits | controller CPU s |" % lim)
print("|---|---|---|---|---|---|---|---|---|")
for d in sys.argv[2:]:
    rows = list(csv.DictReader(open(os.path.join(d, 'calls-zram-memext-r0.csv'))))
    r = list(csv.DictReader(open(os.path.join(d, 'results.csv'))))[0] if os.path.exists(os.path.join(d, 'results.csv')) else {}
    within = sum(1 for c in rows if float(c['latency_ms']) <= lim)
    warm = sum(1 for c in rows if int(c['majflt'] or 0) < 100)
    print(f"| {os.path.basename(d.rstrip('/'))} | {r.get('p50_ms')} ms | {r.get('p99_ms')} ms | {within} | {warm} | {r.get('timer_predictable_p99_ms')} ms | {r.get('unused_while_waiting_mib')} MiB | {r.get('cap_hits')} | {r.get('cpu_controller_s')} |")
