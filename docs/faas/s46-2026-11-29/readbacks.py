#!/usr/bin/env python3
"""memext's read-backs in a daemon log of bench/faas, by why they were made
(the `reason` of the `bringing-back` before each `read-back` of the same
context: woke, periodic, refill, follows-leader): how many, how much they
covered, how long they took, at what rate.  readbacks.py LOG[.gz]..."""
import collections, gzip, json, sys


def by_reason(path):
    """{reason: [read-backs, bytes, seconds]} of one daemon log."""
    reason, by = {}, collections.defaultdict(lambda: [0, 0, 0.0])
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        for line in f:
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if e.get("event") == "bringing-back":
                reason[e["context"]] = e.get("reason")
            elif e.get("event") == "read-back":
                r = by[reason.get(e["context"], "?")]
                r[0] += 1
                r[1] += e["bytes"]
                r[2] += e["seconds"]
    return by


def main(paths):
    for path in paths:
        by = by_reason(path)
        print(path)
        for k, (n, b, s) in sorted(by.items(), key=lambda kv: -kv[1][1]):
            print(f"  {k:14s} {n:5d} read-backs {b / 2**30:6.1f} GiB {s:6.1f} s {b / 2**20 / max(s, 1e-9):6.0f} MiB/s")


if __name__ == "__main__":
    main(sys.argv[1:])
