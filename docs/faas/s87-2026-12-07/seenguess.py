#!/usr/bin/env python3
"""guess.py's two guesses replayed on the histories runs' daemons saw:
session 65's `keepseen.py` (the calls the daemon logged no wake, onset
or call near are left out of their function's history), with the
engine's busy rule (called within 2 s: kept first) and its one wake for
calls within 2 s of each other, as guess.py has them.

Usage (from the repository root): seenguess.py RUN_DIR... (bench/faas
memext runs of one tier and mode, with their daemon's log)"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "s65-2026-12-04"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "bench", "faas"))
import bound  # noqa: E402
import keepseen  # noqa: E402
import trace as tr  # noqa: E402
from guess import guess  # noqa: E402

def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    print("| run | calls not seen | warm, k+0,s1 (until session 87) | warm, k+10,s.5 (since) |")
    print("|---|---|---|---|")
    for d in sys.argv[1:]:
        params, heaps, cap = bound.load_run(d)
        trace = tr.generate(params)
        sizes = [h + bound.BASE_MIB for h in heaps]
        classes = [f.cls for f in trace.functions]
        close, far = keepseen.unseen_calls(d)
        unseen = close | far
        out = [bound.simulate(trace.calls, sizes, classes, cap - keepseen.FLOORS_MIB, "memext", 3.0, cap / 32,
                              estimate=e, merge=lambda _p, t: round(t, 3) in unseen)["all"]
               for e in (guess(0, 1.0), guess(10, 0.5))]
        print(f"| {os.path.relpath(d)} | {len(unseen)} | {out[0]} | {out[1]} |")


if __name__ == "__main__":
    main()
