#!/usr/bin/env python3
"""Writes, for bench/faas runs, each function's calls and the wakes the daemon recorded (woke, onset, warm-call,
call events of its log) in the text form `replay_wakes` reads: `f NAME CLASS`, `c T...`, `w T...` (seconds from
the trace's start, shifted by +300 s so that none is negative)."""
import collections, csv, datetime, glob, gzip, json, sys

SHIFT = 300.0
for run in sys.argv[1:]:
    d = json.load(open(glob.glob(run + "/functions-*.json")[0]))
    logf = glob.glob(run + "/memext-daemon-*.log*")[0]
    t0 = d["trace_start_epoch"]
    byhash = {v.split("/")[-1]: k for k, v in d["cgroups"].items()}
    calls, cls = collections.defaultdict(list), {}
    for r in csv.DictReader(open(glob.glob(run + "/calls-*.csv")[0])):
        calls[r["function"]].append(float(r["t"]))
        cls[r["function"]] = r["class"]
    wakes = collections.defaultdict(list)
    op = gzip.open if logf.endswith(".gz") else open
    for line in op(logf, "rt"):
        j = json.loads(line)
        if j.get("event") not in ("woke", "onset", "warm-call", "call"):
            continue
        fn = byhash.get(j.get("context", "").split("/")[-1])
        if fn:
            ts = datetime.datetime.fromisoformat(j["timestamp"].replace("Z", "+00:00")).timestamp() - t0
            wakes[fn].append(ts)
    print(f"r {run}")
    for fn in sorted(calls):
        print(f"f {fn} {cls[fn]}")
        print("c " + " ".join(f"{t + SHIFT:.3f}" for t in sorted(calls[fn])))
        print("w " + " ".join(f"{t + SHIFT:.3f}" for t in sorted(wakes[fn])))
