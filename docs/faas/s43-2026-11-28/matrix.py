#!/usr/bin/env python3
"""One table over bench/faas runs of every mode (session 43): per tier and
mode, p50 / p99 / p99.9 (over the answered calls), calls within 8 ms (of
all), calls that got no answer, timer calls from the 4th p99, DRAM mean,
unused while calls waited, the controller's CPU; then issue 16's targets
against the ideal run found among them (p50 at most 2x ideal's, p99 at
most 1.5x the tier's cold-call limit p99, timer calls from the 4th p99 at
most 1.2x ideal's). Usage: matrix.py RUN_DIR..."""
import csv
import glob
import os
import sys

rows, within = [], {}
for d in sys.argv[1:]:
    for r in csv.DictReader(open(os.path.join(d, "results.csv"))):
        rows.append(r)
        calls = os.path.join(d, f"calls-{r['tier']}-{r['mode']}-r{r['round']}.csv")
        r["mode"] = f"{r['mode']} ({os.path.basename(d.rstrip('/'))})" if len(sys.argv) > 2 else r["mode"]
        c = list(csv.DictReader(open(calls)))
        within[(r["tier"], r["mode"], r["round"])] = (sum(1 for x in c if not x["error"] and float(x["latency_ms"]) <= 8.0),
                                          len(c))
ideal = next((r for r in rows if r["mode"].startswith("ideal")), None)
f = lambda r, k: float(r[k]) if r.get(k) not in (None, "", "None") else float("nan")  # noqa: E731
print("| tier | mode | round | p50 | p99 | p99.9 | timer from call 4 p99 | within 8 ms | no answer | DRAM mean | "
      "unused while calls waited | controller CPU s |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    w, n = within[(r["tier"], r["mode"], r["round"])]
    print(f"| {r['tier']} | {r['mode']} | {int(r['round']) + 1} | {f(r, 'p50_ms'):.0f} ms | {f(r, 'p99_ms'):.0f} ms | {f(r, 'p999_ms'):.0f} ms "
          f"| {f(r, 'timer_predictable_p99_ms'):.0f} ms | {w} of {n} | {r['errors']} | {f(r, 'dram_mean_mib'):.0f} MiB "
          f"| {f(r, 'unused_while_waiting_mib'):.0f} MiB | {f(r, 'cpu_controller_s'):.1f} |")
if ideal is None:
    sys.exit(0)
print()
print(f"targets (ideal p50 {f(ideal, 'p50_ms'):.1f} ms, timer from call 4 p99 {f(ideal, 'timer_predictable_p99_ms'):.1f} ms):")
for r in rows:
    if r["mode"].startswith("ideal"):
        continue
    p50 = f(r, "p50_ms") / f(ideal, "p50_ms")
    p99 = f(r, "p99_ms") / (1.5 * f(r, "cold_limit_p99_ms"))
    tim = f(r, "timer_predictable_p99_ms") / f(ideal, "timer_predictable_p99_ms")
    print(f"  {r['tier']:8s} {r['mode']:8s} p50 {p50:6.1f}x ideal (target 2x)  p99 {p99:6.1f}x the target "
          f"(1.5x cold limit {f(r, 'cold_limit_p99_ms'):.0f} ms)  timer from 4 p99 {tim:6.1f}x ideal (target 1.2x)")
