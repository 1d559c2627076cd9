#!/usr/bin/env python3
"""What the daemon did in each memext run of a bench/peers invocation: its
log (DIR/memext-daemon.log or .log.gz, every daemon run of the invocation
appended) split at each daemon start, matched in order with the memext runs
that the invocation's progress output (DIR/run.log, or DIR.out) lists.

  python3 daemonruns.py DIR...

Per run: onsets, wakes, freezes and thaws (admission), push-outs started
and lowerings done by the background reclaimer."""
import gzip
import json
import os
import re
import sys

EVENTS = ["onset", "woke", "frozen", "thawed", "pushing-out", "reclaimed"]


def runs_of(log):
    runs = []
    lines = gzip.open(log + ".gz", "rt") if os.path.exists(log + ".gz") else open(log)
    for line in lines:
        if '"memext daemon: cgroup' in line:
            runs.append({e: 0 for e in EVENTS})
            continue
        try:
            ev = json.loads(line).get("event")
        except ValueError:
            continue
        if runs and ev in runs[-1]:
            runs[-1][ev] += 1
    return runs


def main(dirs):
    print("| run | cell | mode | " + " | ".join(EVENTS) + " |")
    print("|---|---|---|" + "---|" * len(EVENTS))
    for d in dirs:
        d = os.path.normpath(d)
        progress = os.path.join(d, "run.log") if os.path.exists(os.path.join(d, "run.log")) else d + ".out"
        modes = re.findall(r"\] \[\d+/\d+\] (\S+) x (\S+), (memext\S*), round", open(progress).read())
        for (crit, noise, mode), counts in zip(modes, runs_of(os.path.join(d, "memext-daemon.log"))):
            print(f"| {os.path.basename(d)} | {crit} x {noise} | {mode} | " + " | ".join(str(counts[e]) for e in EVENTS) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
