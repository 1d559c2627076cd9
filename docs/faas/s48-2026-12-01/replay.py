#!/usr/bin/env python3
"""What the keep order finds warm with the history the engine can record
(s47's history.py: transfers free, functions whole, the engine's estimate),
on the trace and cap of RUN_DIR:
- every call recorded; calls within 2 s (1 s) of the function's previous
  call merged into one; and a 1 s tick's rule at four phases of the ticks:
  a call recorded only where a whole tick interval without a call lies
  between it and the previous call, or 2 s or more do (an onset);
- with the calls each given run's daemon did record (a `woke`, `onset`,
  `warm-call` or `call` within 1.5 s after the call), for each RECORDED_DIR
  (a bench/faas directory with one memext run on zram, as ab.sh leaves).

Usage (from the repository root): replay.py RUN_DIR [RECORDED_DIR...]"""
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "s47-2026-11-29"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "bench", "faas"))
import bound  # noqa: E402
import history as h  # noqa: E402
import timeline  # noqa: E402
import trace as tr  # noqa: E402

RECORDS = ("woke", "onset", "warm-call", "call")


def tick_rule(phase):
    """Merged unless a whole tick interval (ticks at phase + k s) lies
    between the previous call and this one, or 2 s or more do."""
    def merged(prev, t):
        if t - prev >= 2.0:
            return False
        k = math.ceil(prev - phase + 1e-9) + phase
        return k + 1.0 > t
    return merged


def recorded_times(d, trace):
    meta, _, events = timeline.load(d, "zram", "memext", 0)
    names = sorted(meta["cgroups"])
    kept = set()
    for t, f in trace.calls:
        evs = events.get(meta["cgroups"][names[f]], [])
        if any(e in RECORDS and 0 <= w - t < 1.5 for w, e, _ in evs):
            kept.add(t)
    return kept


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    params, heaps, cap = bound.load_run(sys.argv[1])
    trace = tr.generate(params)
    sizes = [x + bound.BASE_MIB for x in heaps]
    classes = [f.cls for f in trace.functions]

    def warm(merge):
        return h.replay(trace.calls, sizes, classes, cap, merge, h.WATCHED, h.engine)
    print(f"{len(trace.calls)} calls, cap {cap:.0f} MiB; the keep order with the engine's estimate:")
    print(f"  every call recorded: {warm(0)} warm")
    print(f"  calls within 2 s merged: {warm(2)}; within 1 s: {warm(1)}")
    print(f"  a 1 s tick's rule, ticks at phase 0, 0.25, 0.5, 0.75 s: {[warm(tick_rule(p)) for p in (0, 0.25, 0.5, 0.75)]}")
    for d in sys.argv[2:]:
        kept = recorded_times(d, trace)
        print(f"  the {len(kept)} calls {os.path.basename(d.rstrip('/'))}'s daemon recorded: "
              f"{warm(lambda prev, t, kept=kept: t not in kept)} warm")


if __name__ == "__main__":
    main()
