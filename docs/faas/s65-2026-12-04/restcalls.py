#!/usr/bin/env python3
"""The resting readings of resident functions that held a call the daemon
did not take for one, against those that held none, and the warm calls it
recorded with and without a call: from the daemon's debug log
(`MEMEXT_LOG=info,memext::daemon::events=debug`: `rested` readings are the
ones that used half a call's CPU or more) and the calls of bench/faas runs.
Readings of 0.9 s or more, with the pages in; "a call" means one came from
the reading's start to its end (50 ms of slack). Then how many of each a
fixed CPU threshold over a reading would take for a call. Readings in the
trace's last 5 s are left out (the functions are stopped after it).

Usage (from the repository root): restcalls.py RUN_DIR..."""
import bisect
import collections
import csv
import glob
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "bench", "faas"))
import timeline  # noqa: E402
from keepseen import daemon_lines  # noqa: E402

SLACK = 0.05


def readings(d):
    meta = json.load(open(glob.glob(os.path.join(d, "functions-*.json"))[0]))
    calls = collections.defaultdict(list)
    for r in csv.DictReader(open(glob.glob(os.path.join(d, "calls-*.csv"))[0])):
        calls[r["function"]].append(float(r["t"]))
    for v in calls.values():
        v.sort()
    start, fn_of = meta["trace_start_epoch"], {cg: fn for fn, cg in meta["cgroups"].items()}
    end = json.load(open(os.path.join(d, "params.json")))["trace"]["seconds"] - 5.0
    out = collections.defaultdict(list)
    for raw in daemon_lines(d):
        if '"rested"' not in raw and '"warm-call"' not in raw:
            continue
        e = json.loads(raw)
        fn = fn_of.get(e.get("context"))
        if not fn or (e.get("event") == "rested" and not e.get("resident")):
            continue
        t, span = timeline.epoch(e["timestamp"]) - start, e.get("span_ms", 0) / 1000
        if span < 0.9 or not 0 <= t <= end:
            continue
        c = calls[fn]
        n = bisect.bisect_right(c, t + SLACK) - bisect.bisect_left(c, t - span - SLACK)
        out[(e["event"], n > 0)].append((e.get("cpu_us", 0), e.get("allowance_us")))
    return out


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    tot = collections.defaultdict(list)
    for d in sys.argv[1:]:
        for k, v in readings(d).items():
            tot[k].extend(v)
    for (event, call), v in sorted(tot.items()):
        cpu = sorted(x for x, _ in v)
        allow = sorted(a for _, a in v if a)
        q = lambda p: cpu[min(len(cpu) - 1, int(p * len(cpu)))] / 1e3  # noqa: E731
        print(f"{event:9} {'with a call' if call else 'no call':11} {len(v):4d}  CPU p10/p50/p90 "
              f"{q(.1):.2f}/{q(.5):.2f}/{q(.9):.2f} ms  allowance median "
              f"{allow[len(allow) // 2] / 1e3 if allow else float('nan'):.2f} ms, none (rest not learned) {len(v) - len(allow)}")
    for th in (1.0, 1.2, 1.4):
        seen = sum(1 for x, _ in tot[("rested", True)] if x > th * 1e3)
        false = sum(1 for x, _ in tot[("rested", False)] if x > th * 1e3)
        print(f"over {th} ms a reading: {seen} of {len(tot[('rested', True)])} missed calls, "
              f"{false} of {len(tot[('rested', False)])} rests without one")


if __name__ == "__main__":
    main()
