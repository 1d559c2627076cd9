#!/usr/bin/env python3
"""Where the room planned and not charged sits (target above usage, mean
MiB per sample), from statsampler.sh's `memext status --json` samples: of
the resting functions (quiet, idle, idle/out), a floor above what it holds
(target at the 4 MiB floor), the learned slack (0.5 MiB), the flat slack
(2 MiB) and the rest; every other kind as a whole. The slack categories
go by value (within 128 KiB), so they assume bench/faas' default floor.
Usage: unusedby.py SAMPLES..."""
import collections
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../bench/faas"))
import stattab  # noqa: E402

MIB = 2**20
FLOOR = 4 * MIB


def category(c):
    k = stattab.kind(c)
    if k not in ("quiet", "idle/out", "idle"):
        return k
    over = (c["target_bytes"] - c.get("usage_bytes", c["resident_bytes"])) / MIB
    if c["target_bytes"] == FLOOR:
        return "resting: floor above usage"
    if abs(over - 0.5) < 0.13:
        return "resting: learned slack"
    if abs(over - 2) < 0.13:
        return "resting: flat slack"
    return "resting: other " + k


def main(paths):
    for path in paths:
        tot, n = collections.Counter(), 0
        for _, cs in stattab.samples(path):
            n += 1
            for c in cs:
                over = c["target_bytes"] - c.get("usage_bytes", c["resident_bytes"])
                if over > 0:
                    tot[category(c)] += over
        print(f"{path}: {n} samples")
        for k, v in tot.most_common():
            print(f"  {k:30s} {v / max(n, 1) / MIB:6.1f} MiB")


if __name__ == "__main__":
    main(sys.argv[1:])
