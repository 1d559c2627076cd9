#!/usr/bin/env python3
"""The DRAM the functions' limits held above their usage, by the function's
state in `memext status --json` (state; pushed out or in; held for a
predicted call): per status sample from 10 s into the trace on, the sum over
the functions in each group; the median of those sums, how many functions
of the group had any, and the group's margins (`margin_bytes`).

Usage: slack.py RUN_DIR... (each with status.json.gz, as ab.sh samples it)"""
import collections
import glob
import gzip
import json
import os
import statistics
import sys

MIB = 1 << 20


def main():
    for d in sys.argv[1:]:
        t0 = json.load(open(glob.glob(os.path.join(d, "functions-*.json"))[0]))["trace_start_epoch"]
        slack, count, margins = (collections.defaultdict(list) for _ in range(3))
        for chunk in gzip.open(os.path.join(d, "status.json.gz"), "rt").read().split("# ")[1:]:
            ts, _, body = chunk.partition("\n")
            try:
                rows = json.loads(body)
            except ValueError:
                continue
            if not 10 < float(ts) - t0 < 180:
                continue
            s, n, m = collections.Counter(), collections.Counter(), collections.Counter()
            for x in rows:
                limit = x.get("limit_bytes")
                if limit is None or limit >= 1 << 40:
                    continue
                key = f"{x['state']}, {'out' if x['out'] else 'in'}{', held' if x['held'] else ''}"
                above = max(0, limit - x["usage_bytes"])
                s[key] += above
                n[key] += above > 0
                m[key] += x.get("margin_bytes", 0)
            for k in set(s) | set(slack):
                slack[k].append(s[k] / MIB)
                count[k].append(n[k])
                margins[k].append(m[k] / MIB)
        print(f"{os.path.basename(d.rstrip('/'))}:")
        for k in sorted(slack, key=lambda k: -statistics.median(slack[k])):
            print(f"  {k}: {statistics.median(slack[k]):.0f} MiB above usage over {statistics.median(count[k]):.0f} "
                  f"function(s); margins {statistics.median(margins[k]):.0f} MiB")


if __name__ == "__main__":
    main()
