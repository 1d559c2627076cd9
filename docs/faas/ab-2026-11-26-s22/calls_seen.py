#!/usr/bin/env python3
"""How many of a bench/faas run's calls the memext daemon recorded in its
contexts' histories (a `woke`, `onset` or `warm-call` event on the trace's
clock), per function class, and the functions it undercounted most.

A call that comes while its function is still active and not yet quiet
(activity seen within `ONSET_QUIET`, 2 s) is no onset: it is not recorded.
The keep order's expected time to a function's next call is the time
watched over the calls recorded, so a function whose calls often come
within 2 s of each other looks rarer than it is.

Usage: calls_seen.py RUN_DIR [RUN_DIR...]   (a memext run on zram, round 0)"""
import collections
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../bench/faas"))
import timeline as tl  # noqa: E402

RECORDED = ("woke", "onset", "warm-call")


def seen(d):
    """[(calls, recorded, function, class)] for one run."""
    meta, calls, events = tl.load(d, "zram", "memext", 0)
    n = collections.Counter(c["function"] for c in calls)
    cls = {c["function"]: c["class"] for c in calls}
    rows = []
    for fn, k in n.items():
        evs = events.get(meta["cgroups"].get(fn), [])
        rows.append((k, sum(1 for t, e, _ in evs if e in RECORDED and t >= 0), fn, cls[fn]))
    return rows


def main(dirs):
    for d in dirs:
        rows = seen(d)
        by = collections.defaultdict(lambda: [0, 0])
        for k, r, _, c in rows:
            by[c][0] += k
            by[c][1] += r
        cells = ", ".join(f"{c} {v[1]} of {v[0]}" for c, v in sorted(by.items()))
        worst = sorted(rows, key=lambda x: x[1] - x[0])[:4]
        print(f"{os.path.basename(d.rstrip('/'))}: recorded {cells}; most undercounted: "
              + ", ".join(f"{fn} ({c}) {r} of {k}" for k, r, fn, c in worst))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
