#!/usr/bin/env python3
"""Lowerings of a bench/faas run's daemon log (`reclaimed` events): all, those
to the 2 MiB floor, and of those the re-lowerings: the context's previous
event (debug readings and room accounts aside) was a lowering that had left
it at the floor and its 1 MiB charge room (3 MiB), so that it was lowered
again from there (nothing raised it meanwhile: a raise comes with a wake,
onset or bring-back); and how many lowerings the kernel refused.
Usage: relower.py RUN_DIR... (its MODE-daemon-TIER-rN.log, or the same gzipped)"""
import glob
import gzip
import json
import os
import sys

FLOOR = 2 << 20
ROOM = 1 << 20
QUIET = ("room", "rested", "warm-call", "no-call")


def count(path):
    opener = gzip.open if path.endswith(".gz") else open
    n = floor = again = refused = 0
    last = {}
    with opener(path, "rt") as f:
        for line in f:
            if not line.startswith("{"):
                continue
            e = json.loads(line)
            c, ev = e.get("context"), e.get("event")
            if not c or ev in QUIET:
                continue
            if ev == "reclaimed":
                n += 1
                refused += "cannot write" in e.get("message", "")
                if e["to"] == FLOOR:
                    floor += 1
                    p = last.get(c)
                    again += bool(p and p.get("event") == "reclaimed" and p.get("reached") == FLOOR + ROOM)
            last[c] = e
    return n, floor, again, refused


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    for d in sys.argv[1:]:
        logs = sorted(glob.glob(os.path.join(d, "*daemon*.log*")))
        n, floor, again, refused = count(logs[0])
        print(f"{os.path.basename(d.rstrip('/'))}: lowerings {n}, to the floor {floor}, "
              f"of them again from the floor and its room {again}, refused {refused}")


if __name__ == "__main__":
    main()
