#!/usr/bin/env python3
"""What the daemon planned against what the functions held: reads the
samples statsampler.sh took (`memext status --json` every 2 s, each after a
line `# EPOCH`) and prints, per sample, the sum of the contexts' targets and
of what they held (anon + file), in total and per kind (state, held, out;
an active context is `busy`, or `quiet` between two calls, where the status
says so). With `--summary`, one table instead: per kind, the mean over the
samples of how many, their targets, what they held, what was charged to
them (`usage_bytes`; resident where the status has no usage), their
limits, and the room planned for them but not charged (target above
usage): where DRAM the plan hands out sits unused.

Usage: stattab.py SAMPLES [FROM_EPOCH TO_EPOCH] [--summary]
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


def kind(c):
    """A context's kind: its state (active split into busy and quiet where
    the status has `quiet`), then held and out."""
    state = c["state"]
    if state == "active" and "quiet" in c:
        state = "quiet" if c["quiet"] else "busy"
    return "/".join(x for x in (state, "held" if c["held"] else "", "out" if c["out"] else "") if x)


def by_kind(cs):
    """{kind: [n, target, resident, usage, limit, planned above usage]} in
    bytes (usage: resident where the status has none)."""
    agg = collections.defaultdict(lambda: [0, 0, 0, 0, 0, 0])
    for c in cs:
        a = agg[kind(c)]
        usage = c.get("usage_bytes", c["resident_bytes"])
        a[0] += 1
        a[1] += c["target_bytes"]
        a[2] += c["resident_bytes"]
        a[3] += usage
        a[4] += c.get("limit_bytes") or 0
        a[5] += max(0, c["target_bytes"] - usage)
    return agg


def summary(rows):
    """Mean per kind over `rows` (a list of by_kind results): a table."""
    n = max(len(rows), 1)
    kinds = sorted({k for r in rows for k in r})
    out = ["| kind | contexts | targets MiB | resident MiB | charged MiB | limits MiB | planned, not charged MiB |",
           "|---|---|---|---|---|---|---|"]
    tot = [0.0] * 6
    for k in kinds:
        m = [sum(r[k][j] for r in rows if k in r) / n for j in range(6)]
        tot = [t + x for t, x in zip(tot, m)]
        out.append(f"| {k} | {m[0]:.1f} | " + " | ".join(f"{x / MIB:.0f}" for x in m[1:]) + " |")
    out.append(f"| all ({len(rows)} samples) | {tot[0]:.1f} | " + " | ".join(f"{x / MIB:.0f}" for x in tot[1:]) + " |")
    return "\n".join(out)


def main():
    args = [a for a in sys.argv[1:] if a != "--summary"]
    if len(args) not in (1, 3):
        sys.exit(__doc__)
    lo, hi = (float(args[1]), float(args[2])) if len(args) == 3 else (0, float("inf"))
    rows = []
    for ts, cs in samples(args[0]):
        if not lo <= ts <= hi:
            continue
        agg = by_kind(cs)
        rows.append(agg)
        if "--summary" in sys.argv:
            continue
        targets = sum(a[1] for a in agg.values()) / MIB
        held = sum(a[2] for a in agg.values()) / MIB
        kinds = " ".join(f"{k}:{a[0]} t{a[1] / MIB:.0f} r{a[2] / MIB:.0f}" for k, a in sorted(agg.items()))
        print(f"{ts:.0f} targets {targets:.0f} MiB, held {held:.0f} MiB | {kinds}")
    if "--summary" in sys.argv:
        print(summary(rows))


if __name__ == "__main__":
    main()
