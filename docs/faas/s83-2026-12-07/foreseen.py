#!/usr/bin/env python3
"""What the plan served whole for predicted wakes (its `prefetched` step)
in a bench/faas memext run: from the daemon's `room` events (debug; each
names the contexts it foresaw since session 83), per function class, by
how soon that function's next call came and whether it had been called in
the JUST_S before (its call just served), the mean MiB so held over the
plans logged, and how many of those plans there were.

Usage (from the repository root): foreseen.py RUN_DIR... (a memext run of
bench/faas with MEMEXT_LOG=...,memext::daemon::events=debug)"""
import collections
import csv
import glob
import gzip
import json
import os
import sys
from bisect import bisect_right
from datetime import datetime

MIB = 1 << 20
JUST_S = 3.0
BUCKETS = ((3.0, "next call within 3 s"), (10.0, "3-10 s"), (30.0, "10-30 s"), (float("inf"), "over 30 s or none"))


def opener(path):
    return gzip.open(path, "rt") if path.endswith(".gz") else open(path)


def load(d, tier):
    meta = json.load(open(glob.glob(os.path.join(d, f"functions-{tier}-*.json"))[0]))
    by_cg = {cg: fn for fn, cg in meta["cgroups"].items()}
    with opener(glob.glob(os.path.join(d, f"calls-{tier}-*.csv*"))[0]) as f:
        rows = list(csv.DictReader(f))
    calls = collections.defaultdict(list)
    cls = {}
    for r in rows:
        calls[r["function"]].append(float(r["t"]))
        cls[r["function"]] = r["class"]
    for v in calls.values():
        v.sort()
    return meta["trace_start_epoch"], by_cg, calls, cls


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    runs = [(d, os.path.basename(f).split("-")[1]) for d in sys.argv[1:]
            for f in sorted(glob.glob(os.path.join(d, "functions-*.json")))]
    for d, tier in runs:
        start, by_cg, calls, cls = load(d, tier)
        held = collections.Counter()
        plans = 0
        reasons = collections.Counter()
        with opener(glob.glob(os.path.join(d, f"memext-daemon-{tier}-*.log*"))[0]) as f:
            for line in f:
                if '"room"' not in line:
                    continue
                x = json.loads(line)
                t = datetime.fromisoformat(x["timestamp"].replace("Z", "+00:00")).timestamp() - start
                if t < 0 or "foreseen" not in x:
                    continue
                plans += 1
                for c in json.loads(x["foreseen"] or "[]"):
                    fn = by_cg.get(c["key"], "?")
                    times = calls.get(fn, [])
                    k = bisect_right(times, t)
                    soon = times[k] - t if k < len(times) else float("inf")
                    bucket = next(name for limit, name in BUCKETS if soon <= limit)
                    just = "yes" if k > 0 and t - times[k - 1] <= JUST_S else "no"
                    held[(cls.get(fn, "?"), c["reason"], bucket, just)] += (c["holds"] + c["swapped"]) / MIB
                    reasons[c["reason"]] += 1
        print(f"{d} ({tier}): {plans} plans logged during the trace; foreseen by reason {dict(reasons)}")
        print(f"| class | reason | next call | called in the {JUST_S:.0f} s before | mean MiB held over the plans |")
        print("|---|---|---|---|---|")
        for k in sorted(held, key=lambda k: -held[k]):
            print(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {held[k] / max(plans, 1):.0f} |")
        mean = {k: v / max(plans, 1) for k, v in held.items()}
        due = sum(v for k, v in mean.items() if k[0] == "timer" and k[2] == BUCKETS[0][1])
        others = sum(v for k, v in mean.items() if k[0] != "timer" and k[2] != BUCKETS[0][1])
        print(f"mean MiB: all {sum(mean.values()):.0f}, timers whose call came within 3 s {due:.0f}, "
              f"Poisson and bursty whose call did not {others:.0f}")


if __name__ == "__main__":
    main()
