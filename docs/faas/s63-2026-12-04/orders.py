#!/usr/bin/env python3
"""What an online keep order can make warm on bench/faas' trace, and on the
same generator's traces of other seeds (the run's parameters otherwise:
100 functions, 180 s, heaps 30-80 MiB, the cap a quarter of their memory),
replayed by bench/faas/bound.py (functions whole, transfers free):
memext's order (expected time to the next call times size), two variants
of its rate estimate (the last 3 or 5 intervals; no floor at the time
since the last call), LRU, and Belady's offline order (the upper bound).
Then for memext's and Belady's order, the calls within 8 ms when each cold
call reads its heap at BW MiB/s, one transfer at a time, and a function
serves one call at a time (a call that comes while its function is still
busy waits for it, as bench/faas' functions do).

Usage: orders.py [SEEDS] [BW]   (default 10 seeds from 1, 1000 MiB/s)"""
import collections
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "bench", "faas"))
import bound  # noqa: E402
import host  # noqa: E402
import trace as tr  # noqa: E402

PARAMS = dict(functions=100, seconds=180.0, timer_share=0.3, poisson_share=0.5, bursty_share=0.2,
              timer_min=15.0, timer_max=60.0, timer_jitter=0.5, poisson_min=10.0, poisson_max=300.0,
              burst_gap_min=30.0, burst_gap_max=300.0, burst_size=4.0, burst_spacing=0.25)


def setup(seed):
    """The trace, each function's memory (heap and base, MiB), classes, heaps and cap."""
    heaps = host.heap_sizes(PARAMS["functions"], 30, 80, seed)
    sizes = [h + bound.BASE_MIB for h in heaps]
    t = tr.generate(tr.Params(seed=seed, **PARAMS))
    return t, sizes, [f.cls for f in t.functions], heaps, 0.25 * sum(sizes)


def recent(k):
    """memext's estimate, its rate from the last k intervals."""
    def est(times, now):
        p = bound.period(times)
        if p is not None and now <= times[-1] + 1.5 * p:
            return max(0.0, times[-1] + p - now)
        mean = (times[-1] - times[-k - 1]) / k if len(times) > k else now / len(times)
        return max(mean, now - times[-1])
    return est


def no_floor(times, now):
    """memext's estimate without the floor at the time since the last call."""
    p = bound.period(times)
    if p is not None and now <= times[-1] + 1.5 * p:
        return max(0.0, times[-1] + p - now)
    return now / len(times)


ESTIMATES = {"memext": bound.expected_wake_in, "recent-3": recent(3), "recent-5": recent(5), "no-floor": no_floor}


def served(calls, heaps, warm, bw):
    """Each call's latency (s): cold ones read their heap at `bw` one at a
    time; a call waits for its function's previous call."""
    free_at, busy_until, out = 0.0, collections.defaultdict(float), []
    for (t, f), w in zip(calls, warm):
        start = max(t, busy_until[f])
        if not w:
            free_at = max(start, free_at) + heaps[f] / bw
            start = free_at
        busy_until[f] = start
        out.append(start - t)
    return out


def main(argv):
    if argv[:1] in (["-h"], ["--help"]) or len(argv) > 2:
        sys.exit(__doc__)
    try:
        seeds, bw = int(argv[0]) if argv else 10, float(argv[1]) if len(argv) > 1 else 1000.0
        if seeds < 1 or bw <= 0:
            raise ValueError
    except ValueError:
        sys.exit("orders.py: SEEDS must be a whole number above 0 and BW a positive number")
    names = list(ESTIMATES) + ["lru", "belady"]
    print("| seed | calls | need for p50 | " + " | ".join(names) + f" | memext within 8 ms | belady within 8 ms |")
    print("|---" * (len(names) + 5) + "|")
    totals = collections.defaultdict(list)
    for seed in range(1, seeds + 1):
        t, sizes, classes, heaps, cap = setup(seed)
        row, flags = {}, {}
        for name in names:
            policy = name if name in ("lru", "belady") else "memext"
            per = []
            got = bound.simulate(t.calls, sizes, classes, cap, policy, 3.0, cap / 32, per_call=per,
                                 estimate=ESTIMATES.get(name, bound.expected_wake_in))
            row[name], flags[name] = got.get("all", 0), per
        within = {p: sum(1 for x in served(t.calls, heaps, flags[p], bw) if x <= 0.008) for p in ("memext", "belady")}
        n = len(t.calls)
        for k, v in list(row.items()) + [(f"{p} within", w) for p, w in within.items()]:
            totals[k].append(v / n)
        print(f"| {seed} | {n} | {n // 2 + 1} | " + " | ".join(str(row[k]) for k in names)
              + f" | {within['memext']} | {within['belady']} |")
    print("\nshare of the calls, median over the seeds: "
          + ", ".join(f"{k} {100 * statistics.median(v):.0f}%" for k, v in totals.items()))


if __name__ == "__main__":
    main(sys.argv[1:])
