#!/usr/bin/env python3
"""Memext's keep order with a period believed after one interval (two calls)
against two (three calls), replayed by bench/faas/bound.py (functions whole,
transfers free, 1/32 of the cap kept free, prefetch 3 s ahead):

  seeds: the trace generator's seeds 1..N with bench/faas' parameters
         (session 63's orders.py), calls within 3 s of the function's
         previous one merged into one wake (history.rs SAME_WAKE_WITHIN);
         warm calls in all and by class.
  runs:  bench/faas memext runs, with only the calls their daemon recorded
         (session 65's keepseen.py; its `both` column).

Usage (from the repository root): oneint.py seeds [N]
                                  oneint.py runs RUN_DIR..."""
import contextlib
import io
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "s63-2026-12-04"))
sys.path.insert(0, os.path.join(HERE, "..", "s65-2026-12-04"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "bench", "faas"))
import bound  # noqa: E402
import keepseen  # noqa: E402
import orders  # noqa: E402

MERGE_S = 3.0


@contextlib.contextmanager
def intervals(k):
    """bound.py's period believed after `k` intervals."""
    was, bound.MIN_INTERVALS = bound.MIN_INTERVALS, k
    try:
        yield
    finally:
        bound.MIN_INTERVALS = was


def seeds(n):
    print("| seed | calls | warm, two intervals (timer / poisson / bursty) | warm, one interval | difference |")
    print("|---|---|---|---|---|")
    for seed in range(1, n + 1):
        t, sizes, classes, _heaps, cap = orders.setup(seed)
        got = []
        for k in (2, 1):
            with intervals(k):
                got.append(bound.simulate(t.calls, sizes, classes, cap, "memext", 3.0, cap / 32, merge=MERGE_S))
        cells = [f"{g.get('all', 0)} ({g.get('timer', 0)} / {g.get('poisson', 0)} / {g.get('bursty', 0)})"
                 for g in got]
        print(f"| {seed} | {len(t.calls)} | {cells[0]} | {cells[1]} | {got[1]['all'] - got[0]['all']:+d} |")


def runs(dirs):
    print("| run | unseen within 2 s / after | warm with the calls recorded: two intervals | one interval |")
    print("|---|---|---|---|")
    for d in dirs:
        row = []
        for k in (2, 1):
            out = io.StringIO()
            with intervals(k), contextlib.redirect_stdout(out):
                sys.argv = ["keepseen.py", d]
                keepseen.main()
            row.append(out.getvalue().strip().splitlines()[-1].strip("|").split("|"))
        name, unseen, both2, both1 = row[0][0].strip(), row[0][1].strip(), row[0][-1].strip(), row[1][-1].strip()
        print(f"| {name} | {unseen} | {both2} | {both1} |")


def main(argv):
    if argv[:1] == ["seeds"] and len(argv) <= 2:
        try:
            n = int(argv[1]) if len(argv) == 2 else 10
        except ValueError:
            n = 0
        if n < 1:
            sys.exit("oneint.py: N must be a whole number above 0")
        return seeds(n)
    if argv[:1] == ["runs"] and len(argv) > 1:
        return runs(argv[1:])
    sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
