#!/usr/bin/env python3
"""The calls a bench/faas run lost against bound.py's memext order (cold in
the run, warm under the order), per function class, and by what the daemon
did to the function since its previous call (bench/faas/timeline.py's
labels; `squeezed`: its limit was lowered into what it held with no
push-out). A markdown table, one row per run.

Usage: lostby.py RUN_DIR [RUN_DIR...]   (memext on zram, round 0, with params.json)"""
import os
import re
import subprocess
import sys

TIMELINE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../bench/faas/timeline.py")


def lost(d, cls):
    """{label: calls} of the calls lost against the order, for one class."""
    out = subprocess.run([sys.executable, TIMELINE, "--bound", "--summary", "--class", cls, d],
                         capture_output=True, text=True, check=True).stdout
    found = {}
    for line in out.splitlines():
        m = re.match(r"\s+cold \(warm in bound\) (\S+)\s+(\d+) calls", line)
        if m:
            found[m.group(1)] = int(m.group(2))
    return found


def main(dirs):
    print("| run | lost: timer | poisson | bursty | all | of them squeezed | out | back (woke, refill, periodic) | kept |")
    print("|---|---|---|---|---|---|---|---|---|")
    for d in dirs:
        per = [sum(lost(d, c).values()) for c in ("timer", "poisson", "bursty")]
        every = lost(d, "all")
        back = sum(v for k, v in every.items() if k.startswith("back:"))
        print(f"| {os.path.basename(d.rstrip('/'))} | {per[0]} | {per[1]} | {per[2]} | {sum(every.values())} | "
              f"{every.get('squeezed', 0)} | {every.get('out', 0)} | {back} | {every.get('kept', 0)} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
