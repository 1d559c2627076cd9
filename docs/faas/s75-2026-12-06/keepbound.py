#!/usr/bin/env python3
"""memext's keep order (bench/faas/bound.py's `memext` policy: transfers free, functions whole) on a run's trace,
as the engine sees it: functions watched W s before the trace (a once-called function's expected interval is the
time watched), calls within MERGE s of the previous one merged into its stretch of activity, and RESERVE MiB of
the cap kept free (the engine's keep_free and margins). Prints the warm calls per class for each setting.

    python3 keepbound.py RUN_DIR
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "bench", "faas"))
import bound  # noqa: E402
import trace as tr  # noqa: E402


def watched_from(w):
    """bound.expected_wake_in with the functions watched `w` s before the trace."""
    def estimate(times, now):
        p = bound.period(times)
        if p is not None and now <= times[-1] + 1.5 * p:
            return max(0.0, times[-1] + p - now)
        mean = now + w if len(times) == 1 else (now - times[0]) / (len(times) - 1)
        return max(mean, now - times[-1])
    return estimate


params, heaps, cap = bound.load_run(sys.argv[1])
trace = tr.generate(params)
sizes = [h + bound.BASE_MIB for h in heaps]
classes = [f.cls for f in trace.functions]
print("| watched before (s) | merge (s) | reserve (MiB) | warm | timer | poisson | bursty |")
print("|---|---|---|---|---|---|---|")
for w, merge, reserve in ((0, 0.0, cap / 32), (45, 0.0, cap / 32), (0, 2.3, cap / 32), (45, 2.3, cap / 32),
                          (45, 2.3, 96), (45, 2.3, 190)):
    r = bound.simulate(trace.calls, sizes, classes, cap, "memext", 3.0, reserve, estimate=watched_from(w), merge=merge)
    print(f"| {w} | {merge} | {reserve:.0f} | {r['all']} | {r.get('timer', 0)} | {r.get('poisson', 0)} | "
          f"{r.get('bursty', 0)} |")
