#!/usr/bin/env python3
"""How many calls memext's keep order finds warm with the history the daemon
recorded, against every call known (bound.py's replay: transfers free,
functions whole, 200 MiB of 2 MiB floors taken from the cap, the engine's
estimate of the next call, history.rs `expected_wake_in`).

A call is in its function's history only if the daemon logged a wake, onset
or call of that function near it (wakes.py `seen`). The unseen ones are split
by the gap since the function's previous call (under 2 s: a burst's; else
after a quiet gap), each left out alone and both together.

Usage (from the repository root): keepseen.py RUN_DIR... (bench/faas memext
runs, their daemon's log MODE-daemon-TIER-rN.log or the same gzipped;
session 64's `ab2/` runs keep it as daemon.log.gz)"""
import csv
import glob
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "bench", "faas"))
import bound  # noqa: E402
import trace as tr  # noqa: E402
import wakes  # noqa: E402

FLOORS_MIB = 200
CLOSE_S = 2.0
WATCHED_BEFORE_S = 45.0  # bench/faas watches its functions 20-71 s before the trace, median ~45


def engine_estimate(times, now, watched_since=-WATCHED_BEFORE_S):
    """history.rs `expected_wake_in` (bound.py's is the rate over the trace)."""
    p = bound.period(times)
    if p is not None and now <= times[-1] + 1.5 * p:
        return max(0.0, times[-1] + p - now)
    mean = now - min(watched_since, times[0]) if len(times) == 1 else (now - times[0]) / (len(times) - 1)
    return max(mean, now - times[-1])


def daemon_lines(d):
    logs = sorted(glob.glob(os.path.join(d, "*daemon*.log*")))
    opener = gzip.open if logs[0].endswith(".gz") else open
    with opener(logs[0], "rt") as f:
        return f.readlines()


def unseen_calls(d):
    """(close, far): the trace times (rounded to ms) of the calls the daemon
    did not see, under and over CLOSE_S after the function's previous call."""
    meta = json.load(open(glob.glob(os.path.join(d, "functions-*.json"))[0]))
    rows = sorted(csv.DictReader(open(glob.glob(os.path.join(d, "calls-*.csv"))[0])), key=lambda r: float(r["t"]))
    by_cg = wakes.parse(daemon_lines(d), set(meta["cgroups"].values()), meta["trace_start_epoch"])
    events = {fn: by_cg.get(cg, []) for fn, cg in meta["cgroups"].items()}
    last, close, far = {}, set(), set()
    for r in rows:
        fn, t = r["function"], float(r["t"])
        gap = t - last.get(fn, -1e9)
        last[fn] = t
        if not wakes.seen(t, events.get(fn, [])):
            (close if gap < CLOSE_S else far).add(round(t, 3))
    return close, far


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    print("| run | unseen within 2 s / after | warm, every call known | burst's unseen left out | quiet gap's left out | both |")
    print("|---|---|---|---|---|---|")
    for d in sys.argv[1:]:
        params, heaps, cap = bound.load_run(d)
        trace = tr.generate(params)
        sizes = [h + bound.BASE_MIB for h in heaps]
        classes = [f.cls for f in trace.functions]
        close, far = unseen_calls(d)

        def warm(left_out):
            return bound.simulate(trace.calls, sizes, classes, cap - FLOORS_MIB, "memext", 3.0, cap / 32,
                                  estimate=engine_estimate, merge=lambda _p, t: round(t, 3) in left_out)["all"]

        print(f"| {os.path.basename(d.rstrip('/'))} | {len(close)} / {len(far)} | {warm(set())} | {warm(close)} "
              f"| {warm(far)} | {warm(close | far)} |")


if __name__ == "__main__":
    main()
