#!/usr/bin/env python3
"""How many calls memext's keep order would find warm if a function called
once were expected again after the host's typical gap (the median of the
mean intervals of the functions called at least twice) instead of after the
time it has been watched: session 65's `keepseen.py` replay (bound.py:
transfers free, functions whole, 200 MiB of floors taken from the cap), the
calls the daemon did not see left out of the histories as there.

Usage (from the repository root): onceprior.py RUN_DIR... (bench/faas memext
runs with their daemon's log)"""
import glob
import gzip
import os
import shutil
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "s65-2026-12-04"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "bench", "faas"))
import bound  # noqa: E402
import keepseen  # noqa: E402
import trace as tr  # noqa: E402


def plain_run(d, tmp):
    """`d`, or where its calls are gzipped (as the runs kept in docs/ are)
    a copy in `tmp` with them plain (session 65's scripts read them so)."""
    if glob.glob(os.path.join(d, "calls-*.csv")):
        return d
    copy = os.path.join(tmp, os.path.basename(d.rstrip("/")) + "-" + str(len(os.listdir(tmp))))
    shutil.copytree(d, copy)
    for gz in glob.glob(os.path.join(copy, "calls-*.csv.gz")):
        with gzip.open(gz, "rb") as src, open(gz[:-3], "wb") as dst:
            shutil.copyfileobj(src, dst)
    return copy


def host_gap(history):
    """The median over the functions called at least twice of their mean
    interval; None without any."""
    gaps = [(t[-1] - t[0]) / (len(t) - 1) for t in history.values() if len(t) >= 2]
    return statistics.median(gaps) if gaps else None


def with_prior():
    """An estimate that takes, for a function called once, the host's typical
    gap where that is shorter than the time it has been watched."""
    def estimate(history, g, now):
        times = history[g]
        if len(times) == 1:
            gap = host_gap(history)
            if gap is not None:
                watched = now - min(-keepseen.WATCHED_BEFORE_S, times[0])
                return max(min(gap, watched), now - times[-1])
        return keepseen.engine_estimate(times, now)
    return estimate


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    print("| run | warm, engine's estimate | warm, host's gap for a function called once |")
    print("|---|---|---|")
    tmp = tempfile.mkdtemp(prefix="onceprior-")
    try:
        for d in sys.argv[1:]:
            print(replay(plain_run(d, tmp), run_name(d)))
    finally:
        shutil.rmtree(tmp)


def run_name(d):
    """A run's name: its directory and the one above it (`ab5/new-r1`)."""
    return "/".join(os.path.normpath(d).split(os.sep)[-2:])


def warm_calls(w):
    return f"{w['all']} (timer {w.get('timer', 0)}, poisson {w.get('poisson', 0)}, bursty {w.get('bursty', 0)})"


def keep_replay(d, **kw):
    """Session 65's replay of the run in `d` (the calls the daemon did not
    see left out of the histories): its trace and bound.simulate's warm
    calls, `kw` passed on."""
    params, heaps, cap = bound.load_run(d)
    trace = tr.generate(params)
    sizes = [h + bound.BASE_MIB for h in heaps]
    classes = [f.cls for f in trace.functions]
    close, far = keepseen.unseen_calls(d)
    left_out = close | far
    warm = bound.simulate(trace.calls, sizes, classes, cap - keepseen.FLOORS_MIB, "memext", 3.0, cap / 32,
                          estimate=keepseen.engine_estimate, merge=lambda _p, t: round(t, 3) in left_out, **kw)
    return trace, warm


def replay(d, name):
    """The table's row for the run in `d`."""
    _, base = keep_replay(d)
    _, prior = keep_replay(d, host_estimate=with_prior())
    return f"| {name} | {warm_calls(base)} | {warm_calls(prior)} |"


if __name__ == "__main__":
    main()
