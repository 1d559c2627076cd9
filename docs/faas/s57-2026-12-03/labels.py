#!/usr/bin/env python3
"""Calls by what the daemon did to their function since its previous call
(timeline.py's label: back:periodic, back:refill, kept, squeezed, out, ...),
per class and run: how many, how many took over 8 ms, their median latency
and minor faults. A timer's calls are counted from its 4th (the ones its
period can predict), the others' all.

Usage (from the repository root): labels.py RUN_DIR..."""
import collections
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "bench", "faas"))
import timeline  # noqa: E402


def rows(d):
    meta, calls, events = timeline.load(d, "zram", "memext", 0)
    by_fn = collections.defaultdict(list)
    for c in calls:
        by_fn[c["function"]].append(c)
    out = collections.defaultdict(list)
    for fn, cs in by_fn.items():
        cls = cs[0]["class"]
        evs = events.get(meta["cgroups"][fn], [])
        for i, (c, gap) in enumerate(timeline.calls_with_gaps(cs, evs)):
            if cls == "timer" and i < 3:
                continue
            out[(cls, timeline.label(gap))].append(c)
    return out


def main():
    dirs = sys.argv[1:] or sys.exit(__doc__)
    print("| run | class | since the previous call | calls | over 8 ms | median ms | median minor faults |")
    print("|---|---|---|---|---|---|---|")
    for d in dirs:
        for (cls, lab), cs in sorted(rows(d).items()):
            if lab not in ("back:refill", "back:periodic"):
                continue
            lat = [c["latency_ms"] for c in cs]
            minflt = [int(c["minflt"] or 0) for c in cs]
            print(f"| {os.path.basename(d.rstrip('/'))} | {cls} | {lab} | {len(cs)} | {sum(x > 8 for x in lat)} "
                  f"| {statistics.median(lat):.1f} | {statistics.median(minflt):.0f} |")


if __name__ == "__main__":
    main()
