#!/usr/bin/env python3
"""Joins a status sample file (statsampler.sh) with usage.all (each function
cgroup's memory.usage_in_bytes every 2 s, sampled beside it) and prints
bench/faas/stattab.py's summary with usage_bytes filled in from the nearest
usage sample (within 1.5 s). Usage: join.py STATUS USAGE [FROM TO]"""
import bisect
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../bench/faas"))
import stattab  # noqa: E402


def usage_samples(path):
    out, ts, cur = [], None, {}
    for line in open(path):
        if line.startswith("# "):
            if ts is not None:
                out.append((ts, cur))
            ts, cur = float(line[2:]), {}
        elif line.strip():
            p, v = line.split()[0], line.split()[-1]
            if v.isdigit():
                cur[p] = int(v)
    if ts is not None:
        out.append((ts, cur))
    return out


def main():
    status, usage = sys.argv[1], usage_samples(sys.argv[2])
    lo, hi = (float(sys.argv[3]), float(sys.argv[4])) if len(sys.argv) == 5 else (0, float("inf"))
    times = [t for t, _ in usage]
    rows = []
    for ts, cs in stattab.samples(status):
        if not lo <= ts <= hi:
            continue
        i = bisect.bisect_left(times, ts)
        near = min((j for j in (i - 1, i) if 0 <= j < len(times)), key=lambda j: abs(times[j] - ts), default=None)
        if near is None or abs(times[near] - ts) > 1.5:
            continue
        u = usage[near][1]
        for c in cs:
            if c["cgroup"] in u:
                c["usage_bytes"] = u[c["cgroup"]]
        rows.append(stattab.by_kind(cs))
    print(stattab.summary(rows))


if __name__ == "__main__":
    main()
