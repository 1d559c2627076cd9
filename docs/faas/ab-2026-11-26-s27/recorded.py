#!/usr/bin/env python3
"""The wakes a bench/faas run's daemon recorded (log events woke, onset,
warm-call), each with a call of its function or without one (no call
within 1.5 s before or after it), by event and how it was seen (via), and,
where the log has them (from ab00629 on), the CPU the reading that showed
it used (cpu_us, over span_ms) and whether the context was held for a
predicted wake (held): quartiles of cpu_us per group. Only within the
trace (its `seconds` in params.json): as the bench stops the functions
after it, their exits are recorded as wakes too.

  python3 recorded.py RUN_DIR...
"""
import collections
import csv
import datetime
import glob
import gzip
import json
import os
import sys

RECORDED = ("woke", "onset", "warm-call")
NEAR_S = 1.5


def quartiles(v):
    s = sorted(v)
    return "/".join(str(s[min(len(s) - 1, int(q * len(s)))]) for q in (0.25, 0.5, 0.75)) if s else "-"


def groups(run):
    meta = json.load(open(glob.glob(run + "/functions-*.json")[0]))
    start = meta["trace_start_epoch"]
    by_cgroup = {v: k for k, v in meta["cgroups"].items()}
    calls = collections.defaultdict(list)
    for r in csv.DictReader(open(glob.glob(run + "/calls-*.csv")[0])):
        calls[r["function"]].append(float(r["t"]))
    end = json.load(open(run + "/params.json"))["trace"]["seconds"]
    out = collections.defaultdict(list)
    log = glob.glob(run + "/*daemon*.log*")[0]
    with (gzip.open if log.endswith(".gz") else open)(log, "rt") as f:
        for line in f:
            if '"event":"' not in line:
                continue
            e = json.loads(line)
            fn = by_cgroup.get(e.get("context"))
            if not fn or e.get("event") not in RECORDED:
                continue
            t = datetime.datetime.fromisoformat(e["timestamp"].replace("Z", "+00:00")).timestamp() - start
            if not 0 <= t <= end:
                continue  # outside the trace: no call to be near
            call = any(abs(t - c) <= NEAR_S for c in calls[fn])
            key = (e["event"], e.get("via", ""), "held" if e.get("held") else "", "call" if call else "none")
            out[key].append(e.get("cpu_us"))
    return out


if __name__ == "__main__":
    for run in sys.argv[1:]:
        print(os.path.basename(run.rstrip("/")))
        for key, cpus in sorted(groups(run).items()):
            known = [c for c in cpus if c is not None]
            print("  {:10} {:5} {:4} {:4} n {:3}  cpu_us q1/median/q3 {}".format(*key, len(cpus), quartiles(known)))
