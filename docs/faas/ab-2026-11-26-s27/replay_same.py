#!/usr/bin/env python3
"""Replays bench/faas runs' recorded wakes (session 26's `replay.py`) into
its final rule (skip+missed) with the wakes recorded within W seconds after
an earlier one kept read as the same wake (the first stands for it), for W
of 1, 2 and 3 s, keeping the first or the last of each run of them.

Per run: hit/false/flipped for each variant (see replay.py), and the totals.

  python3 replay_same.py RUN_DIR...
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ab-2026-11-26-s26"))
import replay as R  # noqa: E402


def same_wakes(rule, within, keep):
    """`rule` on the wakes with each run of them recorded within `within`
    after its first read as one: its first (or last) stands for it."""
    def read(wakes):
        runs = []
        for t in wakes:
            if runs and t - runs[-1][0] < within:
                runs[-1][1] = t
                continue
            runs.append([t, t])
        return rule([first if keep == "first" else last for first, last in runs])
    return read


VARIANTS = [("skip+missed", R.skip)] + [
    ("{:.0f}s-{}".format(w, k), same_wakes(R.skip, w, k)) for w in (1.0, 2.0, 3.0) for k in ("first", "last")]

if __name__ == "__main__":
    total = {name: [0, 0, 0] for name, _ in VARIANTS}
    for run in sys.argv[1:]:
        row = []
        for name, rule in VARIANTS:
            counts = R.replay(run, rule)
            total[name] = [a + b for a, b in zip(total[name], counts)]
            row.append("{} {}/{}/{}".format(name, *counts))
        print(os.path.basename(run.rstrip("/")), "  ".join(row), flush=True)
    print("total (hit/false/flipped):", "  ".join("{} {}/{}/{}".format(n, *v) for n, v in total.items()))
