#!/usr/bin/env python3
"""What the daemon planned against what the functions held: reads the
samples statsampler.sh took (`memext status --json` every 2 s, each after a
line `# EPOCH`) and prints, per sample, the sum of the contexts' targets and
of what they held (anon + file), in total and per kind (state, held, out).

Usage: stattab.py SAMPLES [FROM_EPOCH TO_EPOCH]
"""
import collections
import gzip
import json
import sys

MIB = 2**20


def samples(path):
    """(epoch, [context report]) for each sample in `path` (plain or .gz)."""
    opener = gzip.open if path.endswith(".gz") else open
    ts, buf = None, []
    with opener(path, "rt") as f:
        for line in list(f) + ["# end"]:
            if not line.startswith("# "):
                buf.append(line)
                continue
            if ts is not None and buf:
                try:
                    yield ts, json.loads("".join(buf))
                except ValueError:
                    pass  # a sample cut short
            ts = float(line[2:]) if line[2:].strip() != "end" else None
            buf = []


def main():
    if len(sys.argv) not in (2, 4):
        sys.exit(__doc__)
    lo, hi = (float(sys.argv[2]), float(sys.argv[3])) if len(sys.argv) == 4 else (0, float("inf"))
    for ts, cs in samples(sys.argv[1]):
        if not lo <= ts <= hi:
            continue
        agg = collections.defaultdict(lambda: [0, 0, 0])
        for c in cs:
            kind = "/".join(x for x in (c["state"], "held" if c["held"] else "", "out" if c["out"] else "") if x)
            a = agg[kind]
            a[0] += 1
            a[1] += c["target_bytes"]
            a[2] += c["resident_bytes"]
        targets = sum(a[1] for a in agg.values()) / MIB
        held = sum(a[2] for a in agg.values()) / MIB
        kinds = " ".join(f"{k}:{n} t{t / MIB:.0f} r{r / MIB:.0f}" for k, (n, t, r) in sorted(agg.items()))
        print(f"{ts:.0f} targets {targets:.0f} MiB, held {held:.0f} MiB | {kinds}")


if __name__ == "__main__":
    main()
