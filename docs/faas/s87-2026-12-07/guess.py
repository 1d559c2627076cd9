#!/usr/bin/env python3
"""How many calls the engine's keep order finds warm with each guess of a
non-periodic function's next call: bound.py's replay (transfers free,
functions whole, 200 MiB of 2 MiB floors taken from the cap, a reserve of
1/32 of it, periodic functions loaded 3 s ahead), with the engine's rules
that bound.py lacks: a function called within 2 s is kept first (busy),
and calls within 2 s of the one before are one wake in its history.

A guess `k+K,sS`: the time since the first wake over the wakes after it
plus K, and no less than S times the time since the last wake. `k+0,s1`
is the guess until session 87; `k+10,s.5` the one since. A function
called once is expected after the time watched (45 s before the trace,
as bench/faas watches its functions, plus the trace so far), as the
engine does.

Prints, per trace shape (bench/faas' defaults at --time-scale 0.5 with
one thing changed), the warm calls over the generator's seeds 1-10 per
guess, the gain over the old one and bench/faas' seed 1 alone; with
--grid, the K x S grid on the default shape.

Usage (from the repository root): guess.py [--grid] [--seeds N]"""
import argparse
import collections
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "bench", "faas"))
import bound  # noqa: E402
import host  # noqa: E402
import trace as tr  # noqa: E402

BUSY_S = 2.0
WATCHED_BEFORE_S = 45.0
FLOORS_MIB = 200
# session 85's matrix4: bench/faas at --seconds 180 --time-scale 0.5
DEFAULT = {"functions": 100, "seconds": 180.0, "timer_share": 0.3, "poisson_share": 0.5, "bursty_share": 0.2,
           "timer_min": 15.0, "timer_max": 60.0, "timer_jitter": 0.5, "poisson_min": 10.0, "poisson_max": 300.0,
           "burst_gap_min": 30.0, "burst_gap_max": 300.0, "burst_size": 4.0, "burst_spacing": 0.25}
SHAPES = {
    "default": {},
    "gaps x2, 360 s": {"seconds": 360.0, "timer_min": 30.0, "timer_max": 120.0, "poisson_min": 20.0,
                       "poisson_max": 600.0, "burst_gap_min": 60.0, "burst_gap_max": 600.0},
    "70% Poisson": {"poisson_share": 0.7, "timer_share": 0.15, "bursty_share": 0.15},
    "Poisson means 20-60 s": {"poisson_min": 20.0, "poisson_max": 60.0},
    "600 s": {"seconds": 600.0},
}


def one_wake_each(times):
    """The calls as the engine's history has them: a call within BUSY_S of
    the one before is the same wake."""
    out, prev = [], None
    for t in times:
        if prev is None or t - prev > BUSY_S:
            out.append(t)
        prev = t
    return out


def guess(k_added, since_share):
    def estimate(times, now):
        if now - times[-1] < BUSY_S:
            return 0.0
        w = one_wake_each(times)
        p = bound.period(w)
        if p is not None and now <= w[-1] + 1.5 * p:
            return max(0.0, w[-1] + p - now)
        after = len(w) - 1
        if after == 0:
            return now + WATCHED_BEFORE_S
        return max((now - w[0]) / (after + k_added), since_share * (now - w[-1]))
    return estimate


def setup(seed, shape):
    p = dict(DEFAULT, seed=seed, **shape)
    heaps = host.heap_sizes(p["functions"], 30, 80, seed)
    cap = int(0.25 * sum(h + bound.BASE_MIB for h in heaps))
    t = tr.generate(tr.Params(**p))
    return t, [h + bound.BASE_MIB for h in heaps], [f.cls for f in t.functions], cap


def warm(seeds, shape, guesses):
    """{guess name: Counter of warm calls by class and 'all'} over `seeds`,
    and {guess name: warm calls of seed 1}."""
    tot, first = collections.defaultdict(collections.Counter), {}
    for seed in seeds:
        t, sizes, classes, cap = setup(seed, shape)
        for name, est in guesses.items():
            w = bound.simulate(t.calls, sizes, classes, cap - FLOORS_MIB, "memext", 3.0, cap / 32, estimate=est)
            tot[name].update(w)
            if seed == 1:
                first[name] = w["all"]
    return tot, first


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--grid", action="store_true", help="the K x S grid on the default shape")
    ap.add_argument("--seeds", type=int, default=10, help="seeds 1..N (default 10)")
    a = ap.parse_args()
    seeds = range(1, a.seeds + 1)
    if a.grid:
        guesses = {f"k+{k},s{s}": guess(k, s) for k in (0, 1, 3, 5, 10, 30) for s in (1.0, 0.75, 0.5, 0.33)}
        tot, first = warm(seeds, {}, guesses)
        base = tot["k+0,s1.0"]["all"]
        print(f"| guess | warm calls, seeds 1-{a.seeds} | against k+0,s1 | seed 1 |")
        print("|---|---|---|---|")
        for n in guesses:
            print(f"| {n} | {tot[n]['all']} | {tot[n]['all'] - base:+d} | {first[n]} |")
        return
    guesses = {"k+0,s1 (until session 87)": guess(0, 1.0), "k+3,s.5": guess(3, 0.5), "k+10,s.5 (since)": guess(10, 0.5)}
    print(f"| shape | calls | " + " | ".join(guesses) + " |")
    print("|---|---|" + "---|" * len(guesses))
    for sn, shape in SHAPES.items():
        tot, first = warm(seeds, shape, guesses)
        calls = sum(len(setup(s, shape)[0].calls) for s in seeds)
        base = tot[next(iter(guesses))]
        cells = []
        for n in guesses:
            c = tot[n]
            cells.append(f"{c['all']} ({c['all'] - base['all']:+d}; Poisson {c['poisson'] - base['poisson']:+d}; "
                         f"seed 1 {first[n]})")
        print(f"| {sn} | {calls} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
