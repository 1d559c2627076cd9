#!/usr/bin/env python3
"""The woken read-backs of a run with daemon.relay, split by whether their
context had been relaid before (its `bringing-back` for `relay`): count and
median rate (bytes over seconds of each read-back over 10 ms).
Usage: relayrate.py DAEMON_LOG[.gz]"""
import statistics
import sys

from table import events


def main(path):
    relaid, reason, before, after = set(), {}, [], []
    for e in events(path):
        c = e.get("context")
        if e.get("event") == "bringing-back":
            reason[c] = e["reason"]
            if e["reason"] == "relay":
                relaid.add(c)
        elif e.get("event") == "read-back" and reason.get(c) == "woke" and e["seconds"] > 0.01:
            (after if c in relaid else before).append(e["bytes"] / 2**20 / e["seconds"])
    print(f"{path}: {len(relaid)} contexts relaid; woken read-backs before their context's relay: {len(before)}, "
          f"median {statistics.median(before):.0f} MiB/s; after: {len(after)}, "
          f"median {statistics.median(after) if after else 0:.0f} MiB/s")


if __name__ == "__main__":
    for p in sys.argv[1:]:
        main(p)
