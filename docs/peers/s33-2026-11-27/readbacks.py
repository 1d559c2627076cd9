#!/usr/bin/env python3
"""Per daemon run in a bench/peers memext-daemon.log(.gz): the wakes and
onsets it saw, its read-backs (how many, how much, for what), the wakes it
froze for admission, and its push-outs.

  python3 readbacks.py RUN_DIR/memext-daemon.log.gz

Each daemon start in the log is one mode of one cell, in the order run.py
ran them (its .out or summary.md says which)."""
import collections
import gzip
import json
import re
import sys

UNIT = {"B": 1 / (1 << 20), "KiB": 1 / 1024, "MiB": 1, "GiB": 1024}


def runs(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        lines = [json.loads(line) for line in f if line.startswith("{")]
    starts = [i for i, l in enumerate(lines) if l["message"].startswith("memext daemon: cgroup")]
    return [lines[a:b] for a, b in zip(starts, starts[1:] + [len(lines)])]


def main(path):
    print("| run | started | woke | onsets | read-backs | MiB read back | frozen | push-outs |")
    print("|---|---|---|---|---|---|---|---|")
    for k, run in enumerate(runs(path)):
        ev = collections.Counter(l.get("event") for l in run)
        mib = 0.0
        for l in run:
            m = re.search(r"read back ([\d.]+)(GiB|MiB|KiB|B) ", l["message"]) if l.get("event") == "read-back" else None
            if m:
                mib += float(m.group(1)) * UNIT[m.group(2)]
        print(f"| {k} | {run[0]['timestamp'][11:19]} | {ev['woke']} | {ev['onset']} | {ev['read-back']} | {mib:.0f} |"
              f" {ev['frozen']} | {ev['pushing-out']} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
