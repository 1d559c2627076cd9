#!/usr/bin/env python3
"""What a bench/faas function's thread was doing while a call waited for its
handler: `tsample.py`'s samples of the function from the invoker's send to
the handler's start (`to_handler_ms`), for each call over 30 ms before its
handler, counted by state and kernel stack (its first four frames), apart
for the calls whose server took no page fault before the handler and
those that did. Samples sweep every ~5 ms: a count is ~5 ms of waiting.

Usage: callwait.py RUN_DIR SAMPLES"""
import collections
import csv
import glob
import json
import os
import sys


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    run, samples = sys.argv[1], sys.argv[2]
    t0 = json.load(open(glob.glob(os.path.join(run, "functions-*.json"))[0]))["trace_start_epoch"]
    by_fn = collections.defaultdict(list)
    for line in open(samples):
        s = json.loads(line)
        by_fn[s["fn"]].append(s)
    calls = list(csv.DictReader(open(glob.glob(os.path.join(run, "calls-*.csv"))[0])))
    for kind in ("no fault before the handler", "server faulted before the handler"):
        counts, n, none = collections.Counter(), 0, 0
        for c in calls:
            if c["error"] or not c["to_handler_ms"] or float(c["to_handler_ms"]) <= 30:
                continue
            faulted = int(c["pre_majflt"] or 0) + int(c["pre_minflt"] or 0) > 0
            if faulted != (kind != "no fault before the handler"):
                continue
            n += 1
            send = t0 + float(c["t"]) + float(c["late_ms"] or 0) / 1e3
            began = send + float(c["to_handler_ms"]) / 1e3
            seen = [s for s in by_fn[c["function"]] if send <= s["t"] < began]
            none += not seen
            for s in seen:
                counts[s["state"] + " " + " < ".join(s["frames"][:4])] += 1
        print(f"{kind}: {n} calls over 30 ms before the handler, {none} with no sample in R or D; samples:")
        for k, v in counts.most_common(12):
            print(f"{v:7d}  {k}")


if __name__ == "__main__":
    main()
