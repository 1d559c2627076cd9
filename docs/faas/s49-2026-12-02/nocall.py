#!/usr/bin/env python3
"""A bench/faas run's recorded calls with no call: the daemon's `warm-call`,
`woke`, `onset` and `call` events with none of the function's calls in the
1.5 s before them (the reading they were seen in: a tick's second, or a
poll), by event, during the trace (from its start to 1.5 s after its last
call: as the bench ends its functions' containers, their runtimes' CPU
makes warm calls of their own). Such an event puts a call that did not come into the
function's history.

Usage (from the repository root): nocall.py RUN_DIR [RUN_DIR...]"""
import collections
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "bench", "faas"))
import timeline  # noqa: E402

EVENTS = ("warm-call", "woke", "onset", "call")


def tally(run):
    meta, calls, events = timeline.load(run, "zram", "memext", 0)
    by_fn = collections.defaultdict(list)
    for c in calls:
        by_fn[c["function"]].append(c["t"])
    out, seen = collections.Counter(), collections.Counter()
    end = max(c["t"] for c in calls) + 1.5
    for fn, cg in meta["cgroups"].items():
        for t, e, _ in events.get(cg, []):
            if e not in EVENTS or not 0 <= t <= end:
                continue
            seen[e] += 1
            if not any(0 <= t - c <= 1.5 for c in by_fn[fn]):
                out[e] += 1
    return seen, out


def main():
    runs = sys.argv[1:] or sys.exit(__doc__)
    for run in runs:
        seen, out = tally(run)
        parts = ", ".join(f"{e} {out[e]} of {seen[e]}" for e in EVENTS)
        print(f"{os.path.basename(run.rstrip('/'))}: with no call: {parts}")


if __name__ == "__main__":
    main()
