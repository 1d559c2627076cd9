#!/usr/bin/env python3
"""The calls a bench/faas run's daemon did not see (no wake, onset, call or
warm call logged near it: wakes.py `seen`), by the gap since the function's
previous call (under 2 s: a burst's) and by whether memext lowered that
function's limit from 2 s before the call to 0.3 s after it: inside the
refault window (refault.rs: for 2 s after memext takes memory, extended
while it goes on, up to 10 ms of the context's CPU and 512 faults count as
memext's, so a warm call's 1-2 ms of CPU in it is not the context's). With
a trace-level log, also what the function's next tick reading said: resident
or not, and whether it saw no CPU at all. `took nothing`: the in-window
calls whose window only lowerings of under 1 ms opened (a limit written
above the usage returns at once; taking pages from zram takes longer).

Usage (from the repository root): inwindow.py RUN_DIR..."""
import collections
import csv
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "bench", "faas"))
sys.path.insert(0, os.path.join(HERE, "..", "s65-2026-12-04"))
import timeline  # noqa: E402
import wakes  # noqa: E402
from keepseen import daemon_lines  # noqa: E402

WINDOW = (-2.0, 0.3)


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    print("| run | burst: in window / not | quiet gap: in window / not | in window, next tick: resident, no CPU / resident / not resident / no tick (waking) | in window, took nothing |")
    print("|---|---|---|---|---|")
    for d in sys.argv[1:]:
        meta = json.load(open(glob.glob(os.path.join(d, "functions-*.json"))[0]))
        start = meta["trace_start_epoch"]
        lines = daemon_lines(d)
        by_cg = wakes.parse(lines, set(meta["cgroups"].values()), start)
        lowered, ticks = collections.defaultdict(list), collections.defaultdict(list)
        for raw in lines:
            tick = '"rested"' in raw and '"via":"tick"' in raw
            if '"reclaimed"' not in raw and not tick:
                continue
            e = json.loads(raw)
            t = timeline.epoch(e["timestamp"]) - start
            if e["event"] == "reclaimed":
                lowered[e["context"]].append((t, e.get("ms", 0.0)))
            elif e["event"] == "rested":
                ticks[e["context"]].append((t, e.get("resident"), e.get("cpu_us")))
        rows = sorted(csv.DictReader(open(glob.glob(os.path.join(d, "calls-*.csv"))[0])), key=lambda r: float(r["t"]))
        last, n, nxt, nothing = {}, collections.Counter(), collections.Counter(), 0
        for r in rows:
            fn, t = r["function"], float(r["t"])
            cg = meta["cgroups"][fn]
            gap = t - last.get(fn, -1e9)
            last[fn] = t
            if wakes.seen(t, by_cg.get(cg, [])):
                continue
            window = [ms for x, ms in lowered[cg] if WINDOW[0] <= x - t <= WINDOW[1]]
            inside = bool(window)
            nothing += inside and all(ms < 1.0 for ms in window)
            n[("burst" if gap < 2 else "quiet", inside)] += 1
            if inside:
                after = [x for x in ticks[cg] if t < x[0] <= t + 1.5]
                if not after:
                    nxt["none"] += 1
                elif after[0][1]:
                    nxt["resident, no CPU" if after[0][2] == 0 else "resident"] += 1
                else:
                    nxt["not resident"] += 1
        print(f"| {os.path.basename(d.rstrip('/'))} | {n[('burst', True)]} / {n[('burst', False)]} "
              f"| {n[('quiet', True)]} / {n[('quiet', False)]} | {nxt['resident, no CPU']} / {nxt['resident']} / "
              f"{nxt['not resident']} / {nxt['none']} | {nothing} |")


if __name__ == "__main__":
    main()
