#!/usr/bin/env python3
"""Session 86: per bench/faas memext run directory, how often the calls the
invoker sent over 1 ms late, and those it sent on time, were due while the
daemon was reading a function back (`read-back` events), mapping one back
(`mapped-back`) or lowering a limit (`reclaimed`): each event's end and
duration from the daemon's log, a call at the middle of its lateness.
Also the seconds of the trace each kind of move was under way.
Usage: overlap.py RUN_DIR..."""
import csv
import glob
import gzip
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "bench"))
from daemonlog import daemon_events  # noqa: E402

KINDS = ("read-back", "mapped-back", "reclaimed")


def moves(run, t0):
    """{kind: [(start, end) s into the trace]} from the run's daemon log."""
    path = glob.glob(os.path.join(run, "*daemon-*.log*"))[0]
    out = {k: [] for k in KINDS}
    for e in daemon_events(path):
        kind = e["event"]
        if kind not in out:
            continue
        m = re.search(r"([\d.]+) ms", e["message"]) if kind == "reclaimed" else \
            re.search(r"in ([\d.]+) s\b", e["message"])
        if m:
            took = float(m.group(1)) / (1000 if kind == "reclaimed" else 1)
            out[kind].append((e["at"] - t0 - took, e["at"] - t0))
    return out


def main():
    print("| run | calls | " + " | ".join(f"due during {k}" for k in KINDS) + " |")
    print("|---|---|" + "---|" * len(KINDS))
    for run in sys.argv[1:]:
        t0 = json.load(open(glob.glob(os.path.join(run, "functions-*.json"))[0]))["trace_start_epoch"]
        iv = moves(run, t0)
        path = glob.glob(os.path.join(run, "calls-*.csv*"))[0]
        with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
            rows = [r for r in csv.DictReader(f) if not r["error"]]
        name = os.path.basename(run.rstrip("/"))
        for label, keep in (("sent over 1 ms late", lambda lt: lt > 1), ("sent on time", lambda lt: lt <= 1)):
            calls = [float(r["t"]) + float(r["late_ms"]) / 2000 for r in rows if keep(float(r["late_ms"]))]
            share = [sum(any(a <= t <= b for a, b in iv[k]) for t in calls) / max(1, len(calls)) for k in KINDS]
            print(f"| {name} | {label}: {len(calls)} | " + " | ".join(f"{100 * s:.0f}%" for s in share) + " |")
        busy = ", ".join(f"{k} {sum(b - a for a, b in iv[k]):.1f} s" for k in KINDS)
        print(f"| {name} | under way | {busy} | | |")


if __name__ == "__main__":
    main()
