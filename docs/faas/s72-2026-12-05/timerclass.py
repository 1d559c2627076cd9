#!/usr/bin/env python3
"""Timer calls from the 4th, by what the daemon did before them (periodic bring-back, its read-back's end, squeezes after it)."""
import collections
import statistics
import sys

import runlog

TAGGED = ("bringing-back", "read-back", "mapped-back", "reclaimed", "pushing-out", "woke", "onset")
tot, leads = collections.Counter(), []
for run in sys.argv[1:]:
    ev = collections.defaultdict(list)
    for fn, ts, j in runlog.events(run, TAGGED):
        e = j["event"]
        ev[fn].append((ts, "bb:" + j.get("reason", "") if e == "bringing-back" else e))
    for fn, rows in runlog.calls(run).items():
        if rows[0]["class"] != "timer":
            continue
        prev = -1e9
        for k, r in enumerate(rows, 1):
            t = float(r["t"])
            if k >= 4:
                seq = [(ts, tag) for ts, tag in ev[fn] if prev + 0.5 < ts < t]
                bb = [ts for ts, tag in seq if tag == "bb:periodic"]
                cold, slow = int(r["majflt"]) > 200, float(r["latency_ms"]) > 16
                if not bb:
                    what = "unpredicted"
                else:
                    b = bb[-1]
                    leads.append(t - b)
                    after = {tag for ts, tag in seq if ts > b}
                    what = ("predicted" + ("+squeezed" if after & {"reclaimed", "pushing-out"} else "")
                            + ("+wake" if after & {"woke", "onset"} else ""))
                tot[(what, "cold" if cold else "warm", "slow" if slow else "fast")] += 1
            prev = t
for k, v in sorted(tot.items()):
    print(v, k)
if leads:
    print("lead call-bringback: quantiles", [round(x, 2) for x in statistics.quantiles(leads, n=10)],
          "min", round(min(leads), 2))
