#!/usr/bin/env python3
"""The timer calls from each function's 4th, by what came before them, for
every mode and round of a bench/faas results directory: whether the
engine's period rule had the call due from the wakes recorded before its
lead (replay_start.py's `engine` rule, a Python copy of history.rs), what
the daemon brought the function back for in the 6 s before it
(`bringing-back` reasons: periodic, refill, woke, follows-leader, none)
and whether it came cold (100 or more major faults in the handler); per
group the calls, the slowest and how many took over 16 ms.

  python3 timer_due.py RUN_DIR..."""
import collections
import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "bench", "faas"))
import replay_start as S  # noqa: E402
import timeline  # noqa: E402

P, R = S.P, S.R
RULE = S.rule(1.0)
BEFORE_S = 6.0


def groups(d, tier, mode, rnd):
    meta, calls, events = timeline.load(d, tier, mode, rnd)
    recorded = {k.split('"')[-2] for k in R.RECORDED}  # woke, onset, warm-call, call
    seen, out = collections.Counter(), collections.defaultdict(list)
    for c in calls:
        seen[c["function"]] += 1
        if c["class"] != "timer" or seen[c["function"]] < 4 or c["error"]:
            continue
        t, evs = c["t"], events.get(meta["cgroups"][c["function"]], [])
        wakes = sorted(at for at, ev, _ in evs if ev in recorded)
        due = P.due(RULE, wakes, t, recorded_before=t - R.LEAD)
        why = sorted({r for at, ev, r in evs if ev == "bringing-back" and t - BEFORE_S < at < t - 0.05}) or ["none"]
        cold = int(c["majflt"] or 0) >= 100
        out[("due" if due else "not due", ",".join(why), "cold" if cold else "warm")].append(c["latency_ms"])
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for d in sys.argv[1:]:
        with open(os.path.join(d, "results.csv")) as f:
            for r in csv.DictReader(f):
                print(f"{os.path.basename(d.rstrip('/'))} {r['mode']} round {r['round']}")
                for k, v in sorted(groups(d, r["tier"], r["mode"], r["round"]).items()):
                    print(f"  {' / '.join(k):40s} {len(v):3d}  slowest {max(v):4.0f} ms  over 16 ms {sum(1 for x in v if x > 16)}")


if __name__ == "__main__":
    main()
