#!/usr/bin/env python3
"""Timer calls the daemon did not see: no wake, onset, warm call or call
recorded for their function within [t - 0.1 s, t + 1.5 s] of the call (its
log's `memext::daemon::events`). For each: how long before the daemon's
next tick it came (the ticks' phase read from the events seen at a tick),
the function's last transition before it, and the latency of its next
call. Then per run: unseen timer calls, of them within 10 ms before a tick,
and the next calls over 10 ms after an unseen one.

Usage: unseen.py RUN_DIR... (bench/faas results directories of memext runs:
calls-*.csv, functions-*.json, the daemon's log gzipped or plain)"""
import collections
import csv
import datetime
import glob
import gzip
import json
import os
import sys

SEEN = {"woke", "onset", "warm-call", "call"}
TRANSITIONS = ("woke", "onset", "settled", "became-idle", "warm-call")
NEAR_TICK_S = 0.01


def daemon_log(d):
    path = (glob.glob(os.path.join(d, "*daemon*.log.gz")) or glob.glob(os.path.join(d, "*daemon*.log")))[0]
    return gzip.open(path, "rt") if path.endswith(".gz") else open(path)


def events(d, t0, cgroups):
    """{function: [(seconds into the trace, event)]}, and the ticks' phase."""
    by_cgroup = {v: k for k, v in cgroups.items()}
    out, ticks = collections.defaultdict(list), []
    for line in daemon_log(d):
        try:
            j = json.loads(line)
        except ValueError:
            continue
        t = datetime.datetime.fromisoformat(j["timestamp"].replace("Z", "+00:00")).timestamp() - t0
        if j.get("via") == "tick":
            ticks.append(t % 1.0)
        if j.get("context") in by_cgroup:
            out[by_cgroup[j["context"]]].append((t, j.get("event")))
    ticks.sort()
    return out, (ticks[len(ticks) // 2] if ticks else 0.0)


def main():
    for d in sys.argv[1:]:
        fns = json.load(open(glob.glob(os.path.join(d, "functions-*.json"))[0]))
        ev, phase = events(d, fns["trace_start_epoch"], fns["cgroups"])
        calls = collections.defaultdict(list)
        for c in csv.DictReader(open(glob.glob(os.path.join(d, "calls-*.csv"))[0])):
            if c["class"] == "timer":
                calls[c["function"]].append(c)
        unseen = near = slow_next = 0
        for fn, cs in sorted(calls.items()):
            for i, c in enumerate(cs):
                t = float(c["t"])
                if any(t - 0.1 <= e <= t + 1.5 for e, k in ev[fn] if k in SEEN):
                    continue
                unseen += 1
                before_tick = (phase - t) % 1.0
                near += before_tick < NEAR_TICK_S
                last = [(e, k) for e, k in ev[fn] if e < t and k in TRANSITIONS][-1:]
                nxt = cs[i + 1]["latency_ms"] if i + 1 < len(cs) else "-"
                slow_next += nxt != "-" and float(nxt) > 10
                print(f"  {fn} call {i + 1} at {t:.3f} s: {c['latency_ms']} ms, {before_tick * 1000:.0f} ms before a tick, "
                      f"after {last[0][1] + ' at %.2f' % last[0][0] if last else 'nothing'}; next call {nxt} ms")
        print(f"{d}: {unseen} timer calls unseen, {near} within {NEAR_TICK_S * 1000:.0f} ms before a tick; "
              f"{slow_next} next calls over 10 ms")


if __name__ == "__main__":
    main()
