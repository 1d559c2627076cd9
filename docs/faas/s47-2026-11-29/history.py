#!/usr/bin/env python3
"""What the keep order loses to the history the engine can see.

bound.py's memext policy knows every call of the trace. The engine knows
wakes: calls within ONSET_QUIET (2 s) of the one before merge into one
stretch of activity, and a function watched before the trace began (about
45 s in bench/faas) counts that time for its first wake. This replays the
keep order (transfers free, functions whole, as bound.py) with the history
recorded that way, and with other estimates of the time to a function's
next call, on a run's trace and cap.

Usage (from the repository root): python3 docs/faas/s47-2026-11-29/history.py RUN_DIR"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "bench", "faas"))
import bound  # noqa: E402
import trace as tr  # noqa: E402

WATCHED = -45.0  # s: when bench/faas' daemon began to watch its functions, on the trace's clock


def periodic(times, now):
    p = bound.period(times)
    if p is not None and now <= times[-1] + 1.5 * p:
        return max(0.0, times[-1] + p - now)
    return None


def engine(times, now, watched):
    """history.rs: the open interval counted in the mean, never less than waited."""
    if len(times) == 1:
        return max(now - min(watched, times[0]), 0.0)
    return max((now - times[0]) / (len(times) - 1), now - times[-1])


def closed(times, now, watched):
    """The closed intervals' mean, never less than waited."""
    if len(times) == 1:
        return max(now - min(watched, times[0]), 0.0)
    return max((times[-1] - times[0]) / (len(times) - 1), now - times[-1])


def mean_only(times, now, watched):
    """The open interval counted in the mean, waited not counted."""
    if len(times) == 1:
        return max(now - min(watched, times[0]), 0.0)
    return (now - times[0]) / (len(times) - 1)


def replay(calls, sizes, classes, cap, merge, watched, estimate, lead=3.0):
    """Warm calls of bound.py's memext order with calls within `merge` s of
    the function's previous call left out of its history, and `estimate`
    (after a periodic function's due time, as history.rs) for the rest."""
    def weigh(times, now):
        p = periodic(times, now)
        return p if p is not None else estimate(times, now, watched)
    return bound.simulate(calls, sizes, classes, cap, "memext", lead, cap / 32, estimate=weigh, merge=merge)["all"]


def main():
    run = sys.argv[1] if len(sys.argv) > 1 else sys.exit(__doc__)
    params, heaps, cap = bound.load_run(run)
    trace = tr.generate(params)
    sizes = [h + bound.BASE_MIB for h in heaps]
    classes = [f.cls for f in trace.functions]
    print(f"{len(trace.calls)} calls, cap {cap:.0f} MiB; bound.py's memext order: "
          f"{bound.simulate(trace.calls, sizes, classes, cap, 'memext', 3.0, cap / 32)['all']} warm")
    print("| estimate | every call, watched from 0 | calls 2 s apart merged, watched from -45 s | merged within 10 s |")
    print("|---|---|---|---|")
    for name, est in (("engine (history.rs)", engine), ("closed intervals", closed), ("mean only", mean_only)):
        cells = [replay(trace.calls, sizes, classes, cap, m, w, est) for m, w in ((0, 0.0), (2, WATCHED), (10, WATCHED))]
        print(f"| {name} | " + " | ".join(map(str, cells)) + " |")
    print("\nthe cap less what pushed-out functions keep (their floors), the engine's estimate, calls merged at 2 s:")
    for less in (0, 150, 300):
        print(f"  cap - {less} MiB: {replay(trace.calls, sizes, classes, cap - less, 2, WATCHED, engine)} warm")


if __name__ == "__main__":
    main()
