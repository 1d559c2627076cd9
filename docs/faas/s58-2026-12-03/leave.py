#!/usr/bin/env python3
"""What the v1 charge room did in a bench/faas run: the daemon's lowerings
(`reclaimed` events) that reached their target, how many of them left the
limit 1 MiB above it, and those given a step back after a refusal; what the
functions pushed out held (`memory status --json` samples of ab.sh: the
median over samples of their count and mean usage); and the functions that
died. Usage: leave.py RUN_DIR..."""
import glob
import gzip
import json
import os
import statistics
import sys

MIB = 1 << 20


def lowerings(d):
    logs = glob.glob(os.path.join(d, "*daemon-*.log*"))
    if not logs:
        return None
    op = gzip.open if logs[0].endswith(".gz") else open
    n = reached = left = relaxed = 0
    with op(logs[0], "rt") as f:
        for line in f:
            if '"reclaimed"' not in line:
                continue
            e = json.loads(line)
            if e.get("event") != "reclaimed" or e.get("stopped"):
                continue
            n += 1
            relaxed += bool(e.get("relaxed"))
            if e.get("steps", 0) > 0 and not e.get("relaxed"):
                reached += 1
                left += e["reached"] - e["to"] == MIB
    return n, reached, left, relaxed


def held_out(d):
    path = os.path.join(d, "status.json.gz")
    if not os.path.exists(path):
        return None
    counts, means = [], []
    chunk = []
    with gzip.open(path, "rt") as f:
        for line in f:
            if line.startswith("#"):
                if chunk:
                    take(chunk, counts, means)
                chunk = []
            else:
                chunk.append(line)
        take(chunk, counts, means)
    return statistics.median(counts), statistics.median(means) if means else 0.0


def take(chunk, counts, means):
    try:
        rows = json.loads("".join(chunk))
    except ValueError:
        return
    out = [r["usage_bytes"] / MIB for r in rows if r.get("out") and r.get("state") == "idle"]
    if out:
        counts.append(len(out))
        means.append(sum(out) / len(out))


def main():
    dirs = sys.argv[1:] or sys.exit(__doc__)
    print("| run | lowerings | reached the target | of them left 1 MiB above | given a step back | "
          "pushed-out idle functions (median) | their mean usage MiB (median) | died |")
    print("|---|---|---|---|---|---|---|---|")
    for d in dirs:
        lw = lowerings(d) or (0, 0, 0, 0)
        ho = held_out(d) or (0, 0.0)
        res = json.load(open(os.path.join(d, "results.json")))
        died = sum(r.get("deaths") or 0 for r in res["rows"])
        print(f"| {os.path.basename(d.rstrip('/'))} | {lw[0]} | {lw[1]} | {lw[2]} | {lw[3]} | {ho[0]:.0f} | {ho[1]:.1f} | {died} |")


if __name__ == "__main__":
    main()
