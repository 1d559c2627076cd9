#!/usr/bin/env python3
"""Session 81's A/B table: per bench/faas run directory (as stored here, logs
gzipped), the figures of its results.json, the rate of its woken read-backs
(the daemon's `read-back` events after a `bringing-back` for `woke`: their
bytes over their seconds), the functions that died, and how its swapped
pages lay 60 s into the replay (slotloop.sh: pages a run of consecutive
slots in address order); then the median per label (the directory's name up
to `-r`). Usage: table.py RUN_DIR..."""
import collections
import csv
import glob
import gzip
import json
import os
import re
import statistics
import sys

COLS = ["p50", "p99", "p99.9", "timer p99", "warm", "cap hits", "CPU s", "woken MiB/s", "died", "pages a run"]


def events(path):
    """The JSON events of a daemon log (gzipped or not)."""
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        for line in f:
            try:
                yield json.loads(line)
            except ValueError:
                continue


def woken_rate(run):
    logs = glob.glob(os.path.join(run, "*daemon*.log*"))
    if not logs:
        return None
    reason, b, s = {}, 0, 0.0
    for e in events(logs[0]):
        if e.get("event") == "bringing-back":
            reason[e["context"]] = e.get("reason")
        elif e.get("event") == "read-back" and reason.get(e["context"]) == "woke":
            b += e["bytes"]
            s += e["seconds"]
    return round(b / 2**20 / s) if s else None


def pages_a_run(run):
    try:
        text = open(run.rstrip("/") + ".slots.txt").read()
    except OSError:
        return None
    m = re.search(r"([\d.]+) pages a run in address order, [\d.]+ in slot order\s*$", text)
    return float(m.group(1)) if m else None


def warm(run):
    """Calls answered whose handler took at most 200 major faults."""
    path = glob.glob(os.path.join(run, "calls-*.csv*"))[0]
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        calls = list(csv.DictReader(f))
    return sum(1 for c in calls if not c["error"] and int(c["majflt"] or 0) <= 200)


def row(run):
    r = json.load(open(os.path.join(run, "results.json")))["rows"][0]
    return [r["p50_ms"], r["p99_ms"], r["p999_ms"], r["timer_predictable_p99_ms"] or 0, warm(run),
            r["cap_hits"] or 0, r["cpu_controller_s"] or 0, woken_rate(run), r.get("deaths", 0), pages_a_run(run)]


def fmt(v):
    return "-" if v is None else f"{v:.1f}" if isinstance(v, float) else str(v)


def main(runs):
    by = collections.defaultdict(list)
    print("| run | " + " | ".join(COLS) + " |\n|---|" + "---|" * len(COLS))
    for run in runs:
        vals = row(run)
        name = os.path.relpath(run.rstrip("/"), os.path.dirname(os.path.dirname(run.rstrip("/"))))
        by[os.path.basename(run.rstrip("/")).split("-r")[0]].append(vals)
        print(f"| {name} | " + " | ".join(fmt(v) for v in vals) + " |")
    print("\n| label | runs | " + " | ".join(COLS) + " |\n|---|---|" + "---|" * len(COLS))
    for label, rows in by.items():
        med = [statistics.median([v for v in col if v is not None]) if any(v is not None for v in col) else None
               for col in zip(*rows)]
        print(f"| {label} | {len(rows)} | " + " | ".join(fmt(v) for v in med) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
