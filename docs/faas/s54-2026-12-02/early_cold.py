#!/usr/bin/env python3
"""How many calls were cold (timeline.WARM_MAJFLT or more major faults in
the handler) before SECONDS into the trace (default 10) and after, over
every calls-*.csv under the given directories; and when the daemon's last
push-out (`pushing-out`, `reclaimed` events) before the trace came.

Usage: early_cold.py [--seconds S] DIR..."""
import argparse
import csv
import datetime
import glob
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "bench", "faas"))
import timeline  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    n = {(early, cold): 0 for early in (0, 1) for cold in (0, 1)}
    last = []
    for d in a.dirs:
        for f in glob.glob(os.path.join(d, "**", "calls-*.csv"), recursive=True):
            for r in csv.DictReader(open(f)):
                if not r["error"]:
                    n[(float(r["t"]) < a.seconds, int(r["majflt"] or 0) >= timeline.WARM_MAJFLT)] += 1
        for fj in glob.glob(os.path.join(d, "**", "functions-*.json"), recursive=True):
            t0 = json.load(open(fj))["trace_start_epoch"]
            mode_round = os.path.basename(fj)[len("functions-zram-"):-len(".json")]
            mode, rnd = mode_round.rsplit("-r", 1)
            logs = glob.glob(os.path.join(os.path.dirname(fj), f"{mode}-daemon-zram-r{rnd}.log*"))
            if not logs:
                continue
            op = gzip.open if logs[0].endswith(".gz") else open
            times = [datetime.datetime.fromisoformat(e["timestamp"].replace("Z", "+00:00")).timestamp() - t0
                     for e in map(json.loads, op(logs[0], "rt"))
                     if e.get("event") in ("pushing-out", "reclaimed")]
            before = [t for t in times if t < 0]
            if before:
                last.append(max(before))
    for early in (1, 0):
        cold, total = n[(early, 1)], n[(early, 1)] + n[(early, 0)]
        print(f"{'before' if early else 'from'} {a.seconds:g} s: {cold} of {total} calls cold ({cold / max(1, total):.0%})")
    if last:
        print(f"the last push-out before the trace, over {len(last)} runs: {min(last):.1f} to {max(last):.1f} s")


if __name__ == "__main__":
    main()
