#!/usr/bin/env python3
"""Other estimates of the time to a function's next call, replayed in session
47's keep order (history.py: transfers free, functions whole; calls 2 s
apart merged, watched from 45 s before the trace), with the whole cap and
with 400 MiB of floors taken from it. Usage (from the repository root):
estimates.py RUN_DIR..."""
import os, sys
sys.path.insert(0, "docs/faas/s47-2026-11-29"); sys.path.insert(0, "bench/faas")
import history as h, bound, trace as tr
def since_call(times, now, watched):
    if len(times) == 1: return max(now - times[0], 0.0)
    return h.engine(times, now, watched)
def half_watched(times, now, watched):
    if len(times) == 1: return max(now - times[0] + (times[0]-min(watched,times[0]))/2, 0.0)
    return h.engine(times, now, watched)
def consistent(times, now, watched):
    # n calls over the whole watched time
    return max((now - min(watched, times[0])) / len(times), now - times[-1])
def prior(times, now, watched, a=1.0, b=20.0):
    # one pseudo-interval of b seconds
    if len(times)==1: return max((now - times[0] + b)/2, now-times[-1])
    return max((now - times[0] + b) / len(times), now - times[-1])
for run in sys.argv[1:]:
    params, heaps, cap = bound.load_run(run)
    t = tr.generate(params)
    sizes = [x + bound.BASE_MIB for x in heaps]; classes = [f.cls for f in t.functions]
    out=[]
    for name, est, w in (("engine -45", h.engine, h.WATCHED), ("engine from 0", h.engine, 0.0), ("since call", since_call, h.WATCHED), ("half watched", half_watched, h.WATCHED), ("consistent n/T", consistent, h.WATCHED),("prior 20s", prior, h.WATCHED), ("prior 10s", lambda a,b,c: prior(a,b,c,b=10.0), h.WATCHED), ("prior 40s", lambda a,b,c: prior(a,b,c,b=40.0), h.WATCHED)):
        out.append((name, [h.replay(t.calls, sizes, classes, cap - less, 2, w, est) for less in (0, 400)]))
    print(run, out)
