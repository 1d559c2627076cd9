#!/usr/bin/env python3
"""Samples the capped parent of a bench/faas run (cgroup v1) every PERIOD:
its usage, limit, failcnt (charges that met the cap) and, from memory.stat, the
hierarchy's swap cache, writeback, dirty, anonymous and file pages. One CSV
row a sample (epoch seconds first). Runs until SECONDS have passed or the
parent is gone after having been seen.

Usage: capsample.py OUT.csv [--seconds 400] [--period 0.02] [--cgroup /sys/fs/cgroup/memory/memext-faas]
"""
import argparse
import os
import time

STAT_KEYS = ("total_swapcached", "total_writeback", "total_dirty", "total_rss", "total_cache", "total_swap")


def read_int(path):
    with open(path) as f:
        return int(f.read())


def read_stat(path):
    out = {}
    with open(path) as f:
        for line in f:
            k, v = line.split()
            if k in STAT_KEYS:
                out[k] = int(v)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--seconds", type=float, default=400)
    p.add_argument("--period", type=float, default=0.02)
    p.add_argument("--cgroup", default="/sys/fs/cgroup/memory/memext-faas")
    a = p.parse_args()
    seen, end = False, time.time() + a.seconds
    with open(a.out, "w") as f:
        f.write("epoch,usage,limit,failcnt," + ",".join(STAT_KEYS) + "\n")
        while time.time() < end:
            try:
                usage = read_int(os.path.join(a.cgroup, "memory.usage_in_bytes"))
                limit = read_int(os.path.join(a.cgroup, "memory.limit_in_bytes"))
                failcnt = read_int(os.path.join(a.cgroup, "memory.failcnt"))
                st = read_stat(os.path.join(a.cgroup, "memory.stat"))
            except (FileNotFoundError, OSError, ValueError):
                if seen:
                    break
                time.sleep(0.5)
                continue
            seen = True
            f.write(f"{time.time():.3f},{usage},{limit},{failcnt}," + ",".join(str(st.get(k, 0)) for k in STAT_KEYS)
                    + "\n")
            time.sleep(a.period)


if __name__ == "__main__":
    main()
