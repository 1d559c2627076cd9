#!/usr/bin/env python3
"""Which calls the keep order's replay finds warm and the run did not: each
call of a bench/faas memext run, as session 65's replay (`keepseen.py`:
bound.py, transfers free, functions whole, 200 MiB of floors, the engine's
estimate, the calls the daemon did not see left out of the histories) has it
(warm or cold) against the run (fast: under 4 ms, twice ideal's p50), per
class, with the median latency. `--detail`: for each Poisson or bursty call
warm in the replay and slow in the run, the gap since its function's
previous call and memext's last moves of that function before it (seconds
before the call, from the daemon's log).

Usage (from the repository root): lost.py [--detail] RUN_DIR..."""
import collections
import csv
import glob
import json
import os
import shutil
import statistics
import sys
import tempfile
from datetime import datetime

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import onceprior  # noqa: E402  (its path setup: bound, keepseen, trace)
import keepseen  # noqa: E402

FAST_MS = 4.0
MOVES = ("pushing-out", "reclaimed", "bringing-back", "read-back", "became-idle", "settled", "woke", "onset")


def replayed(d):
    """[(t, function name, warm in the replay)] in the trace's order, and
    the run's calls by (function, t)."""
    flags = []
    trace, _ = onceprior.keep_replay(d, per_call=flags)
    names = [f.name for f in trace.functions]
    with open(glob.glob(os.path.join(d, "calls-*.csv"))[0]) as f:
        rows = {(r["function"], round(float(r["t"]), 3)): r for r in csv.DictReader(f)}
    return [(t, names[g], w) for (t, g), w in zip(trace.calls, flags)], rows


def moves_by_function(d):
    """{function: [(seconds into the trace, event)]} of memext's moves."""
    meta = json.load(open(glob.glob(os.path.join(d, "functions-*.json"))[0]))
    by_cg = {cg: fn for fn, cg in meta["cgroups"].items()}
    out = collections.defaultdict(list)
    for line in keepseen.daemon_lines(d):
        try:
            x = json.loads(line)
        except ValueError:
            continue
        fn = by_cg.get(x.get("context"))
        if fn and x.get("event") in MOVES:
            at = datetime.fromisoformat(x["timestamp"].replace("Z", "+00:00")).timestamp()
            out[fn].append((at - meta["trace_start_epoch"], x["event"]))
    return out


def table(d, name):
    calls, rows = replayed(d)
    count, lat = collections.Counter(), collections.defaultdict(list)
    for t, fn, warm in calls:
        r = rows.get((fn, round(t, 3)))
        if r is None or r["error"]:
            continue
        ms = float(r["latency_ms"])
        k = ("warm" if warm else "cold", "fast" if ms < FAST_MS else "slow", r["class"])
        count[k] += 1
        lat[k].append(ms)
    print(f"{name}\n| replay | run | class | calls | p50 ms |\n|---|---|---|---|---|")
    for k in sorted(count):
        print(f"| {k[0]} | {k[1]} | {k[2]} | {count[k]} | {statistics.median(lat[k]):.1f} |")
    lost = {c: count[("warm", "slow", c)] for c in ("timer", "poisson", "bursty")}
    print(f"warm in the replay {sum(v for k, v in count.items() if k[0] == 'warm')}, fast in the run "
          f"{sum(v for k, v in count.items() if k[1] == 'fast')}, warm in the replay and slow in the run "
          f"{sum(lost.values())} {lost}, cold in the replay and fast in the run "
          f"{sum(v for k, v in count.items() if k[0] == 'cold' and k[1] == 'fast')}")


def detail(d, name):
    calls, rows = replayed(d)
    moves = moves_by_function(d)
    last = {}
    print(f"{name}: Poisson and bursty calls warm in the replay, slow in the run")
    for t, fn, warm in calls:
        prev, last[fn] = last.get(fn), t
        r = rows.get((fn, round(t, 3)))
        if not warm or r is None or r["error"] or float(r["latency_ms"]) < FAST_MS or r["class"] == "timer":
            continue
        before = [m for m in moves[fn] if (prev if prev is not None else 0.0) - 1 < m[0] < t][-4:]
        gap = f"{t - prev:5.1f}" if prev is not None else "    -"
        print(f"  {fn} {r['class']:7s} t={t:6.1f} gap={gap} {float(r['latency_ms']):6.1f} ms  "
              + " ; ".join(f"{m[0] - t:+.1f} {m[1]}" for m in before))


def main():
    args = sys.argv[1:]
    show = detail if args[:1] == ["--detail"] else table
    args = args[1:] if show is detail else args
    if not args:
        raise SystemExit(__doc__)
    tmp = tempfile.mkdtemp(prefix="lost-")
    try:
        for d in args:
            show(onceprior.plain_run(d, tmp), onceprior.run_name(d))
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
