#!/usr/bin/env python3
"""The calls a bench/faas run lost against bound.py's memext order (cold in
the run, warm under the order), per function class, and by what the daemon
did to the function since its previous call (bench/faas/timeline.py's
labels; `squeezed`: its limit was lowered into what it held with no
push-out). A markdown table, one row per run.

Usage: lostby.py RUN_DIR [RUN_DIR...]   (memext on zram, round 0, with params.json)"""
import collections
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../bench/faas"))
import timeline as tl  # noqa: E402


def lost(d):
    """[(class, label)] of each call the run lost against the order."""
    meta, calls, events = tl.load(d, "zram", "memext", 0)
    warm_in_order = tl.bound_warmth(d)
    by_fn = collections.defaultdict(list)
    for c in calls:
        by_fn[c["function"]].append(c)
    out = []
    for fn, cs in by_fn.items():
        for i, (c, gap) in enumerate(tl.calls_with_gaps(cs, events.get(meta["cgroups"].get(fn), []))):
            if tl.warmth(c) == "cold" and warm_in_order.get((fn, i)):
                out.append((c["class"], tl.label(gap)))
    return out


def main(dirs):
    print("| run | lost: timer | poisson | bursty | all | of them squeezed | out | back (woke, refill, periodic) | kept |")
    print("|---|---|---|---|---|---|---|---|---|")
    for d in dirs:
        rows = lost(d)
        cls = collections.Counter(c for c, _ in rows)
        lab = collections.Counter(lb for _, lb in rows)
        back = sum(v for k, v in lab.items() if k.startswith("back:"))
        print(f"| {os.path.basename(d.rstrip('/'))} | {cls['timer']} | {cls['poisson']} | {cls['bursty']} | "
              f"{len(rows)} | {lab['squeezed']} | {lab['out']} | {back} | {lab['kept']} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
