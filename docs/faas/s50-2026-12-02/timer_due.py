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
import datetime
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import replay_start as S  # noqa: E402

P, R = S.P, S.R
RULE = S.rule(1.0)
BEFORE_S = 6.0


def events(d, tier, mode, rnd):
    meta = json.load(open(os.path.join(d, f"functions-{tier}-{mode}-r{rnd}.json")))
    start, by_cgroup = meta["trace_start_epoch"], {v: k for k, v in meta["cgroups"].items()}
    wakes, backs = collections.defaultdict(list), collections.defaultdict(list)
    log = os.path.join(d, f"{mode}-daemon-{tier}-r{rnd}.log")
    opener = open if os.path.exists(log) else None
    if opener is None:
        import gzip
        log, opener = log + ".gz", gzip.open
    with opener(log, "rt") as f:
        for line in f:
            back = '"bringing-back"' in line
            if not back and not any(k in line for k in R.RECORDED):
                continue
            e = json.loads(line)
            fn = by_cgroup.get(e.get("context"))
            if not fn:
                continue
            at = datetime.datetime.fromisoformat(e["timestamp"].replace("Z", "+00:00")).timestamp() - start
            (backs[fn].append((at, e["reason"])) if back else wakes[fn].append(at))
    return wakes, backs


def groups(d, tier, mode, rnd):
    wakes, backs = events(d, tier, mode, rnd)
    seen, out = collections.Counter(), collections.defaultdict(list)
    with open(os.path.join(d, f"calls-{tier}-{mode}-r{rnd}.csv")) as f:
        for c in csv.DictReader(f):
            seen[c["function"]] += 1
            if c["class"] != "timer" or seen[c["function"]] < 4 or c["error"]:
                continue
            t, fn = float(c["t"]), c["function"]
            due = P.due(RULE, sorted(wakes[fn]), t, recorded_before=t - R.LEAD)
            why = sorted({r for at, r in backs[fn] if t - BEFORE_S < at < t - 0.05}) or ["none"]
            cold = int(c["majflt"] or 0) >= 100
            out[("due" if due else "not due", ",".join(why), "cold" if cold else "warm")].append(float(c["latency_ms"]))
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
