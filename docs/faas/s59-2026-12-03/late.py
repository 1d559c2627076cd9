#!/usr/bin/env python3
"""Cold calls that came soon after memext lowered their function, and how
their wake was seen: per run, the calls over 8 ms whose function's limit a
lowering (a `reclaimed` event) ended within WINDOW s before the call, by
the way the daemon first saw the call (`via` of the first woke/onset after
it: event, poll or tick; none within 2 s), with their median latency and
the median delay from the call to that sighting. Also the wakes seen only
at a tick after their function used more than 20 ms of CPU (a call that
ran cold before the daemon saw it).

Usage (from the repository root): late.py [--window S] RUN_DIR..."""
import collections
import csv
import datetime
import glob
import gzip
import json
import os
import statistics
import sys


def load(d):
    meta = json.load(open(glob.glob(os.path.join(d, "functions-*.json"))[0]))
    t0 = meta["trace_start_epoch"]
    by_cg = {v: k for k, v in meta["cgroups"].items()}
    ev = collections.defaultdict(list)
    ticks_cold = 0
    log = sorted(glob.glob(os.path.join(d, "*daemon*.log*")))[0]
    for line in (gzip.open(log, "rt") if log.endswith(".gz") else open(log)):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        fn = by_cg.get(e.get("context"))
        if not fn:
            continue
        ts = datetime.datetime.fromisoformat(e["timestamp"].replace("Z", "+00:00")).timestamp() - t0
        ev[fn].append((ts, e))
        if e.get("event") in ("woke", "onset") and e.get("via") == "tick" and (e.get("cpu_us") or 0) > 20000:
            ticks_cold += 1
    calls = list(csv.DictReader(open(glob.glob(os.path.join(d, "calls-*.csv"))[0])))
    return calls, ev, ticks_cold


def main():
    args = sys.argv[1:]
    window = 1.0
    if args[:1] == ["--window"]:
        window, args = float(args[1]), args[2:]
    if not args:
        sys.exit(__doc__)
    print(f"| run | cold calls (> 8 ms) | of them within {window:g} s after a lowering | seen via event / poll / tick / not | "
          "their median ms | median delay to the sighting ms | wakes seen at a tick after > 20 ms CPU |")
    print("|---|---|---|---|---|---|---|")
    for d in args:
        calls, ev, ticks_cold = load(d)
        cold = [c for c in calls if float(c["latency_ms"]) > 8]
        after = []
        for c in cold:
            fn, t = c["function"], float(c["t"])
            lows = [ts for ts, e in ev[fn] if e.get("event") == "reclaimed" and t - window <= ts <= t]
            if not lows:
                continue
            seen = [(ts, e.get("via")) for ts, e in ev[fn]
                    if e.get("event") in ("woke", "onset") and t - 0.05 <= ts <= t + 2]
            after.append((c, seen[0] if seen else None))
        via = collections.Counter((s[1] if s else "not") for _, s in after)
        lat = [float(c["latency_ms"]) for c, _ in after]
        delay = [1e3 * (s[0] - float(c["t"])) for c, s in after if s]
        med = lambda xs: f"{statistics.median(xs):.0f}" if xs else "-"
        print(f"| {os.path.basename(d.rstrip('/'))} | {len(cold)} | {len(after)} | "
              f"{via['event']} / {via['poll']} / {via['tick']} / {via['not']} | {med(lat)} | {med(delay)} | {ticks_cold} |")


if __name__ == "__main__":
    main()
