#!/usr/bin/env python3
"""What memext's predicted read-backs were for: per reason (periodic,
refill, follows-leader), how many were followed by a call of that function
within WINDOW seconds of being asked (default 10), by the function's class,
and the MiB they read back. A read-back no call followed is work (the
mover's decompression now, the push-out's compression later) that the
cold calls beside it wait for on a small host.

  python3 forwhat.py [--window 10] RUN_DIR...
"""
import argparse
import csv
import datetime
import glob
import gzip
import json
import os


def epoch(ts):
    return datetime.datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--window", type=float, default=10.0)
    ap.add_argument("runs", nargs="+")
    a = ap.parse_args()
    for d in a.runs:
        for fpath in sorted(glob.glob(os.path.join(d, "functions-*-memext-r0.json"))):
            tier = os.path.basename(fpath).split("-")[1]
            f = json.load(open(fpath))
            t0, fn_of = f["trace_start_epoch"], {v: k for k, v in f["cgroups"].items()}
            calls, cls = {}, {}
            for r in csv.DictReader(open(os.path.join(d, f"calls-{tier}-memext-r0.csv"))):
                calls.setdefault(r["function"], []).append(float(r["t"]))
                cls[r["function"]] = r["class"]
            log = os.path.join(d, f"memext-daemon-{tier}-r0.log")
            lines = gzip.open(log + ".gz", "rt") if os.path.exists(log + ".gz") else open(log)
            asked, out = {}, {}
            for line in lines:
                e = json.loads(line)
                fn = fn_of.get(e.get("context"))
                if fn is None:
                    continue
                t = epoch(e["timestamp"]) - t0
                if e.get("event") == "bringing-back":
                    reason = e.get("reason")
                    if reason == "woke":
                        asked.pop(fn, None)
                        continue
                    called = any(t <= c <= t + a.window for c in calls.get(fn, []))
                    key = (reason, cls.get(fn, "-"), "called" if called else "no call")
                    out.setdefault(key, [0, 0])[0] += 1
                    asked[fn] = key
                elif e.get("event") == "read-back" and fn in asked:
                    out[asked[fn]][1] += e["bytes"] >> 20
            print(f"{d} ({tier}), within {a.window:g} s:")
            for key in sorted(out):
                n, mib = out[key]
                print(f"  {' / '.join(key)}: {n} asked, {mib} MiB read back")


if __name__ == "__main__":
    main()
