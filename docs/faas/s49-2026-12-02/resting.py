#!/usr/bin/env python3
"""The resting readings of a bench/faas run's functions with their pages in
and a rest learned (the daemon's debug `rested` events: a reading judged
no call that used half a call's CPU or more), tallied by whether a call
came within the reading, whether its CPU was beyond the allowance logged
with it, and its major faults (`major_faults`, logged from session 49 on;
`?` before). A call judged rest is not in the function's history.

Usage (from the repository root): resting.py RUN_DIR [RUN_DIR...]"""
import collections
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "bench", "faas"))
import timeline  # noqa: E402


def majors(m):
    if m is None:
        return "major ?"
    return "major 0" if m == 0 else "major 1-16" if m <= 16 else "major >16"


def tally(run):
    meta, calls, _ = timeline.load(run, "zram", "memext", 0)
    by_fn = collections.defaultdict(list)
    for c in calls:
        by_fn[c["function"]].append(c["t"])
    inv = {v: k for k, v in meta["cgroups"].items()}
    out = collections.Counter()
    with timeline.open_log(run, "zram", "memext", 0) as f:
        for e in timeline.json_lines(f):
            fn = inv.get(e.get("context"))
            a = e.get("allowance_us")
            if e.get("event") != "rested" or fn is None or not e.get("resident") or a is None:
                continue
            t = timeline.epoch(e["timestamp"]) - meta["trace_start_epoch"]
            span = e.get("span_ms", 1000) / 1e3
            call = any(t - span - 0.05 <= c <= t for c in by_fn[fn])
            out[("call" if call else "no call", "beyond" if e["cpu_us"] > a else "within",
                 majors(e.get("major_faults")))] += 1
    return out


def main():
    runs = sys.argv[1:] or sys.exit(__doc__)
    for run in runs:
        print(os.path.basename(run.rstrip("/")))
        for k, n in sorted(tally(run).items()):
            print(f"  {', '.join(k)}: {n}")


if __name__ == "__main__":
    main()
