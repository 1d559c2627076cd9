#!/usr/bin/env python3
"""Per daemon run in a bench/peers memext-daemon.log(.gz): the wakes and
onsets seen by kernel event, how many of them came with no CPU counted
(`cpu_us` 0), and, in a log written at MEMEXT_LOG=info,memext::daemon=debug,
the kernel events whose reading was no wake ("kernel event, no wake": the
charge was memext's own doing, or, from session 34 on, the context neither
faulted nor ran); with session 34's build also the faults each event wake
was judged on.

  python3 wakes.py RUN_DIR/memext-daemon.log(.gz)

Each daemon start in the log is one mode of one cell, in the order run.py
ran them (its .out or summary.md says which)."""
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "s33-2026-11-27"))
from readbacks import runs  # noqa: E402


def main(path):
    print("| run | started | event wakes + onsets | of them with 0 CPU | faults they were judged on (median) | kernel events judged no wake |")
    print("|---|---|---|---|---|---|")
    for k, run in enumerate(runs(path)):
        ev = [l for l in run if l.get("event") in ("woke", "onset") and l.get("via") == "event"]
        zero = sum(1 for l in ev if l.get("cpu_us") == 0)
        faults = [l["faults"] for l in ev if "faults" in l]
        no_wake = sum(1 for l in run if l.get("message") == "kernel event, no wake")
        med = f"{statistics.median(faults):.0f}" if faults else "-"
        print(f"| {k} | {run[0]['timestamp'][11:19]} | {len(ev)} | {zero} | {med} | {no_wake} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
