#!/usr/bin/env python3
"""Where the memext daemon's loop was held by knob writes: tallies the
`slow-write` events of a daemon log (`--log-format json`, or gzipped; every knob write of
10 ms or more) per daemon run, by what the context was last seen doing
(its last engine event before the write: `pushing-out`, `settled`, ...).
Beside them, the lowerings done off the loop by the reclaimer thread
(`reclaimed` events: how many, their time, how many a new write stopped).

A v1 limit written below the usage makes the kernel reclaim in the writing
thread: the daemon's loop with `daemon.reclaim = "loop"`, the reclaimer
otherwise. Usage: slow_writes.py DAEMON_LOG [--top N]"""
import argparse
import collections
import gzip
import json

# The engine events that say what a context is doing (see daemon/events.rs).
STATES = ("pushing-out", "became-idle", "woke", "settled", "bringing-back", "read-back", "frozen", "thawed")


def tally(lines):
    """Per daemon run (a run starts at the daemon's first line), the slow
    writes: {"ms": {state: total ms}, "count": {state: n}, "writes": [(time,
    context, state, value, ms)]}, and the reclaimer's lowerings: "background"
    {"n", "ms", "stopped"}. Lines that are not JSON are skipped."""
    runs = []
    for line in lines:
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("message", "").startswith("memext daemon: cgroup"):
            runs.append({"ms": collections.Counter(), "count": collections.Counter(), "writes": [], "last": {},
                         "background": {"n": 0, "ms": 0.0, "stopped": 0}})
        if not runs:
            continue
        run, ctx, event = runs[-1], e.get("context"), e.get("event")
        if event == "slow-write":
            state = run["last"].get(ctx, "-")
            run["ms"][state] += e["ms"]
            run["count"][state] += 1
            run["writes"].append((e.get("timestamp", ""), ctx, state, e.get("value"), e["ms"]))
        elif event == "reclaimed":
            bg = run["background"]
            bg["n"] += 1
            bg["ms"] += e.get("ms", 0.0)
            bg["stopped"] += bool(e.get("stopped"))
        elif event in STATES:
            run["last"][ctx] = event
    for run in runs:
        del run["last"]
    return runs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("log", help="the daemon's JSON log, or LOG.gz (bench/peers: OUT/memext-daemon.log)")
    ap.add_argument("--top", type=int, default=5, help="the longest writes to list per run (default 5)")
    a = ap.parse_args()
    opener = gzip.open if a.log.endswith(".gz") else open
    with opener(a.log, "rt") as f:
        runs = tally(f)
    if not runs:
        raise SystemExit(f"{a.log}: no daemon run in it (is it a --log-format json log?)")
    for i, run in enumerate(runs):
        total = sum(run["ms"].values())
        by = ", ".join(f"{s} {ms / 1e3:.2f} s ({run['count'][s]})" for s, ms in run["ms"].most_common())
        bg = run["background"]
        print(f"run {i + 1}: {total / 1e3:.2f} s in {sum(run['count'].values())} slow writes; by state: {by or '-'}; "
              f"off the loop: {bg['n']} lowerings, {bg['ms'] / 1e3:.2f} s, {bg['stopped']} stopped")
        for t, ctx, state, value, ms in sorted(run["writes"], key=lambda w: -w[4])[:a.top]:
            print(f"  {t[11:23]} {ms:6.0f} ms  {state:<12} {ctx} = {value}")


if __name__ == "__main__":
    main()
