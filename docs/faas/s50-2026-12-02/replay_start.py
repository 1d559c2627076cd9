#!/usr/bin/env python3
"""Replays bench/faas runs' recorded wakes into the engine's period rule
(session 28's `both`: the precursor, an extra wake half an unseen one; a
Python copy of history.rs, not its code) and into the same rule with the
wakes before a chain's start costing less: today each wake left out before
the chain counts as an unseen one, so a function with one stale wake before
its timer began (a call while the bench started it) needs three intervals
on schedule after it instead of two. Variants: a wake left out before the
chain costs half an unseen one (as an extra one does), or nothing.

Per run and in total: hit/false/flipped (session 26's replay.py): timer
calls due at the call from the wakes recorded before its lead, predictions
no call met, timer calls due and then no longer due before they came. The
wakes are the `woke`, `onset`, `warm-call` and `call` events (what the
engine records since session 48).

  python3 replay_start.py RUN_DIR...   (single-mode run directories)
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "ab-2026-11-26-s26"))
sys.path.insert(0, os.path.join(HERE, "..", "ab-2026-11-26-s28"))
import replay as R  # noqa: E402
import replay_precursor as P  # noqa: E402

R.RECORDED = R.RECORDED + ('"event":"call"',)


def rule(lead_cost):
    """The engine's rule with each wake before a chain's start costing
    `lead_cost` of an unseen one (1 today)."""
    return P.with_precursor(lambda wakes, now: P.same_wake(wakes, now, extra=0.5, lead_cost=lead_cost))


RULES = (("engine", rule(1.0)), ("lead-half", rule(0.5)), ("lead-free", rule(0.0)))

if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    total = {name: [0, 0, 0] for name, _ in RULES}
    for run in sys.argv[1:]:
        row = []
        for name, r in RULES:
            counts = P.replay(run, r)
            total[name] = [a + b for a, b in zip(total[name], counts)]
            row.append("{} {}/{}/{}".format(name, *counts))
        print(os.path.basename(run.rstrip("/")), "  ".join(row), flush=True)
    print("total (hit/false/flipped):", "  ".join("{} {}/{}/{}".format(n, *v) for n, v in total.items()))
