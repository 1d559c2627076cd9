#!/usr/bin/env python3
"""Where a bench/faas run's charges at the cap came from, from the parent's
memory.failcnt, usage and limit sampled every 0.1 s beside the runs
(failcnt.sh -> failcnt.txt.gz: epoch seconds, failcnt, usage, limit), the
daemon's log and `memext status --json` sampled by ab.sh (status.json.gz).

Per run: the charges at the cap in the trace, in how many whole seconds they
came and the share of the ten busiest; the wakes (woke/onset events) within
1 s of those ten against all seconds' median; at each tick's plan the free
room under the cap (limit - usage, the sample after the plan) against the
room the plan left (`left` + `margins`); and the DRAM the limits held above
the usage (sum of limit - usage over the functions, each status sample
from 10 s into the trace on).

Usage: bursts.py FAILCNT_TXT_GZ RUN_DIR..."""
import bisect
import datetime
import glob
import gzip
import json
import os
import statistics
import sys

MIB = 1 << 20


def epoch(ts):
    return datetime.datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


def events(d):
    f = glob.glob(os.path.join(d, "memext*-daemon-*.log*"))[0]
    op = gzip.open if f.endswith(".gz") else open
    with op(f, "rt") as fh:
        return [json.loads(l) for l in fh]


def status_samples(d):
    f = os.path.join(d, "status.json.gz")
    if not os.path.exists(f):
        return []
    out = []
    for chunk in gzip.open(f, "rt").read().split("# ")[1:]:
        ts, _, body = chunk.partition("\n")
        try:
            out.append((float(ts), json.loads(body)))
        except ValueError:
            continue
    return out


def main():
    samples = [tuple(map(float, l.split()[:4])) for l in gzip.open(sys.argv[1], "rt") if len(l.split()) >= 4]
    ts = [s[0] for s in samples]
    print("| run | charges at the cap | seconds with any | ten busiest seconds' share | wakes within 1 s of them | "
          "median wakes within 1 s | free under the cap at ticks (median, p10) | the plan's room left | "
          "limits above usage (median, range) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for d in sys.argv[2:]:
        t0 = json.load(open(glob.glob(os.path.join(d, "functions-*.json"))[0]))["trace_start_epoch"]
        if ts[0] > t0 - 1:
            continue  # not sampled
        evs = events(d)
        wakes = [epoch(e["timestamp"]) - t0 for e in evs if e.get("event") in ("woke", "onset")]
        bins = {}
        for a, b in zip(samples, samples[1:]):
            if 0 <= b[0] - t0 < 181 and b[1] > a[1]:
                bins[int(b[0] - t0)] = bins.get(int(b[0] - t0), 0) + b[1] - a[1]
        total = sum(bins.values())
        top = sorted(bins, key=lambda s: -bins[s])[:10]
        near = lambda s: sum(1 for w in wakes if s - 1 <= w < s + 1)
        free, left = [], []
        for e in evs:
            if e.get("event") != "room" or e.get("via") != "tick":
                continue
            t = epoch(e["timestamp"])
            i = bisect.bisect_left(ts, t)
            if t0 < t < t0 + 180 and i < len(samples):
                free.append((samples[i][3] - samples[i][2]) / MIB)
                left.append((e["left"] + e["margins"]) / MIB)
        slack = [sum(max(0, r["limit_bytes"] - r["usage_bytes"]) for r in rows
                     if r.get("limit_bytes") is not None and r["limit_bytes"] < 1 << 40) / MIB
                 for t, rows in status_samples(d) if 10 < t - t0 < 180]
        free.sort()
        print(f"| {os.path.basename(d.rstrip('/'))} | {total:.0f} | {len(bins)} | "
              f"{sum(bins[s] for s in top) / max(1, total):.0%} | {', '.join(str(near(s)) for s in top)} | "
              f"{statistics.median(near(s) for s in range(181)):.0f} | "
              f"{statistics.median(free):.0f}, {free[len(free) // 10]:.0f} MiB | {statistics.median(left):.0f} MiB | "
              + (f"{statistics.median(slack):.0f}, {min(slack):.0f}-{max(slack):.0f} MiB |" if slack else "- |"))


if __name__ == "__main__":
    main()
