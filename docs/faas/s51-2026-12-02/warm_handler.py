#!/usr/bin/env python3
"""How long the handler of a warm call took (no major fault in it), by the
time since its function's previous call, in bench/faas runs: where the
calls of functions left resident between calls lose time that no fault
explains.

  python3 warm_handler.py LABEL=CSV[,CSV...] [LABEL=CSV...]

Per label: calls with no major fault in the handler, binned by the gap
since the same function's previous call; the handler's p50 and p90; of
the calls with a gap of 8-40 s, how many took over 5 ms, how many of those
mapped 100 pages or more from the swap cache (minor faults), and their
classes."""
import collections
import csv
import sys

BINS = ((0, 2), (2, 8), (8, 20), (20, 40), (40, 200))
SLOW_MS = 5.0


def q(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else float("nan")


def calls_with_gap(path):
    """(gap since the function's previous call in s, row) of every call after its first."""
    last, out = {}, []
    with open(path) as f:
        rows = sorted(csv.DictReader(f), key=lambda r: float(r["t"]))
    for r in rows:
        t = float(r["t"])
        gap = t - last[r["function"]] if r["function"] in last else None
        last[r["function"]] = t
        if gap is not None and r["handler_ms"] and not r["error"]:
            out.append((gap, r))
    return out


def report(label, paths):
    by_bin = collections.defaultdict(list)
    mid = []
    for p in paths:
        for gap, r in calls_with_gap(p):
            if int(r["majflt"]) > 0:
                continue
            h = float(r["handler_ms"])
            for lo, hi in BINS:
                if lo <= gap < hi:
                    by_bin[(lo, hi)].append(h)
            if 8 <= gap < 40:
                mid.append((h, int(r["minflt"]), r["class"]))
    print(f"{label} ({len(paths)} run{'s' if len(paths) > 1 else ''}): warm calls with no major fault, handler ms by gap")
    for lo, hi in BINS:
        v = by_bin[(lo, hi)]
        print(f"  gap {lo:>3}-{hi:<3} s  {len(v):4d} calls  p50 {q(v, .5):5.2f}  p90 {q(v, .9):6.2f}")
    slow = [x for x in mid if x[0] > SLOW_MS]
    classes = collections.Counter(c for _, _, c in slow)
    print(f"  gap 8-40 s: {len(slow)} of {len(mid)} over {SLOW_MS:g} ms, {sum(1 for _, m, _ in slow if m >= 100)} of them"
          f" with 100+ minor faults; by class {dict(sorted(classes.items()))}")


def main(argv):
    if not argv:
        print(__doc__)
        return 2
    for arg in argv:
        label, _, paths = arg.partition("=")
        report(label, paths.split(","))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
