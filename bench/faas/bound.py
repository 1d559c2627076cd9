#!/usr/bin/env python3
"""How many of a trace's calls can find their function in DRAM under the
cap: what a keep policy is judged against, worked out from the trace alone.

A function takes its heap plus the interpreter's BASE_MIB; a call is warm
when its function is resident as the call comes. A function called and not
resident is loaded whole, and functions are evicted whole, in the policy's
order, until it fits under the cap less a reserve. Transfers take no time:
these are bounds on the share of warm calls. `--bandwidth` adds what the
cold calls of each policy cost at the tier's bulk read-back bandwidth:
each reads its heap (only: the interpreter's pages and the evictions are
free) on one of `channels` transfers at a time, first come first served,
from its call's time; a warm call takes no time. That is a lower bound on
the latencies of a controller that keeps what the policy keeps, and the
number of calls it leaves over 1.5x the cold-call limit's p99 (issue 16's
p99 target) says whether the trace's bursts, queued on the tier, put that
target out of reach for that order (the room each cold call needs is free
here; at a full cap it is not: memext-e2e coldcall measures what it costs).

  belady   offline: evicts the function called again last (it knows the
           trace); loads only on demand. Among demand-loading policies the
           upper bound (for whole functions of unequal size, near it).
  lru      evicts the function called least recently (plain Linux's page
           LRU, roughly, at function grain).
  memext   the engine's keep order (planner.rs `most_valuable_first`): the
           longest expected time to its next call times its size first; a
           periodic function (one interval, or all of its last eight
           within 20% of their median, as history.rs believes one) is
           loaded `lead` s before its next call is due.

The p50 target of issue 16 (at most 2x ideal) needs more than half of the
calls warm. Usage:

  python3 bench/faas/bound.py RUN_DIR          # a bench/faas run's params.json
  python3 bench/faas/bound.py RUN_DIR --bandwidth 2000 [--channels 2]
"""
import argparse
import collections
import heapq
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results  # noqa: E402
import trace as tr  # noqa: E402

BASE_MIB = 12  # as run.py counts a function's memory besides its heap
PERIOD_TOLERANCE = 0.2
MIN_INTERVALS = 1
RATE_PRIOR_WAKES = 10  # history.rs
MAX_UNSEEN_IN_ONE = 2  # history.rs
ROLL_MIN_WAKES = 4  # history.rs
POLICIES = ("belady", "lru", "memext")


def period(times):
    """The period history.rs believes from these call times, or None."""
    w = times[-9:]
    if len(w) < MIN_INTERVALS + 1:
        return None
    iv = sorted(b - a for a, b in zip(w, w[1:]))
    m = iv[len(iv) // 2]
    if m <= 0 or any(abs(d - m) > PERIOD_TOLERANCE * m for d in iv):
        return None
    return m


def expected_wake_in(times, now):
    """history.rs's guess (watched from 0): until due for a periodic
    function not overdue by half a period (from four calls on, past up to
    two calls missing from it); called once, the time watched;
    else half the time since its last call, and no less than the time
    since its first spread over the calls after it plus RATE_PRIOR_WAKES."""
    p = period(times)
    if p is not None:
        due = times[-1] + p
        # Past calls that went unseen (history.rs `expected_call`).
        for _ in range(MAX_UNSEEN_IN_ONE if len(times) >= ROLL_MIN_WAKES else 0):
            if now <= due + p / 2:
                break
            due += p
        if now <= due + p / 2:
            return max(0.0, due - now)
    if len(times) == 1:
        return now
    return max((now - times[0]) / (len(times) - 1 + RATE_PRIOR_WAKES), (now - times[-1]) / 2)


def merged(merge, prev, t):
    """Whether a call at `t` after one at `prev` merges into its stretch of
    activity: within `merge` s, or as `merge(prev, t)` says."""
    return merge(prev, t) if callable(merge) else 0 < merge and t - prev <= merge


def simulate(calls, sizes, classes, cap, policy, lead=3.0, reserve=0.0, per_call=None, until=None, state=None,
             estimate=expected_wake_in, merge=0.0, extra=(), host_estimate=None):
    """Warm calls of `calls` [(t, function index)], in total and per class;
    `per_call`, a list, gets each call's warmth in the order of `calls`.
    With `until`, only what comes before that time is replayed; `state`, a
    dict, gets the functions resident then (`resident`) and each one's call
    times (`history`). The memext policy weighs a function by
    `estimate(its call times, now)` times its size; with `merge`, a call
    within that many seconds of the function's previous one (or, callable,
    where `merge(previous, t)`) is left out of its history (as the engine
    merges a stretch of activity into one wake). `extra` [(t, function
    index)]: calls taken where none came (a rest taken for a call), in the
    history only: nothing is loaded or counted for them. `host_estimate`,
    where given, replaces `estimate`: `host_estimate(every function's call
    times, g, now)` (an estimate that reads the host's other functions)."""
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}")
    next_use = [float("inf")] * len(calls)
    seen = {}
    for k in range(len(calls) - 1, -1, -1):
        f = calls[k][1]
        next_use[k] = seen.get(f, float("inf"))
        seen[f] = k
    events = [(t, 1, k, f) for k, (t, f) in enumerate(calls)] + [(t, 2, -1, f) for t, f in extra]
    heapq.heapify(events)
    resident, used = set(), 0.0
    history = collections.defaultdict(list)
    last_call = {}
    upcoming = {}  # function -> index of its next call (belady)
    warm = collections.Counter()
    flags = [False] * len(calls)

    def cost(g, now):
        if policy == "belady":
            return upcoming.get(g, float("inf"))
        if policy == "lru":
            return now - history[g][-1] if history[g] else float("inf")
        if not history[g]:
            return float("inf")
        if host_estimate is not None:
            return host_estimate(history, g, now) * sizes[g]
        return estimate(history[g], now) * sizes[g]

    def load(f, now):
        nonlocal used
        while used + sizes[f] > cap - reserve:
            others = [g for g in resident if g != f]
            if not others:
                break
            victim = max(others, key=lambda g: (cost(g, now), g))
            resident.discard(victim)
            used -= sizes[victim]
        resident.add(f)
        used += sizes[f]

    while events:
        t, kind, k, f = heapq.heappop(events)
        if until is not None and t >= until:
            break
        if kind == 0:  # a predicted call: loaded ahead
            if f not in resident:
                load(f, t)
            continue
        if kind == 2:  # a call taken where none came: its history only
            if not history[f] or t > history[f][-1]:
                history[f].append(t)
            continue
        upcoming[f] = next_use[k]
        if f in resident:
            warm[classes[f]] += 1
            warm["all"] += 1
            flags[k] = True
        else:
            load(f, t)
        if f not in last_call or not merged(merge, last_call[f], t):
            history[f].append(t)
        last_call[f] = t
        p = period(history[f]) if policy == "memext" else None
        if p is not None:
            heapq.heappush(events, (t + p - lead, 0, k, f))
    if per_call is not None:
        per_call.extend(flags)
    if state is not None:
        state.update(resident=set(resident), history=dict(history))
    return dict(warm)


def bounds(params, heaps_mib, cap_mib, lead=3.0, reserve_mib=0.0):
    """{policy: warm counts} for the trace of `params` (trace.Params)."""
    trace = tr.generate(params)
    sizes = [h + BASE_MIB for h in heaps_mib]
    classes = [f.cls for f in trace.functions]
    out = {p: simulate(trace.calls, sizes, classes, cap_mib, p, lead, reserve_mib) for p in POLICIES}
    totals = collections.Counter(classes[f] for _, f in trace.calls)
    totals["all"] = len(trace.calls)
    return out, dict(totals)


def transfer_latencies(calls, heaps_mib, warm, bandwidth_mib_s, channels=1):
    """Each call's latency (s) when every cold one (not `warm`, a flag per
    call of `calls` [(t, function index)] in time order) reads its function's
    heap at `bandwidth_mib_s` on the first of `channels` transfers free, in
    call order; warm calls take no time."""
    if bandwidth_mib_s <= 0 or channels < 1:
        raise ValueError("the bandwidth and the channels must be positive")
    free_at = [0.0] * channels
    out = []
    for (t, f), w in zip(calls, warm):
        if w:
            out.append(0.0)
            continue
        k = min(range(channels), key=lambda i: free_at[i])
        start = max(t, free_at[k])
        free_at[k] = start + heaps_mib[f] / bandwidth_mib_s
        out.append(free_at[k] - t)
    return out


def latency_bounds(params, heaps_mib, cap_mib, bandwidth_mib_s, channels=1, lead=3.0, reserve_mib=0.0):
    """{policy: {p50_ms, p99_ms, over}} for the trace of `params`: each
    policy's calls at the tier's bandwidth (transfer_latencies), with `over`
    the calls above 1.5x the cold-call limit's p99, and that limit
    (results.py's: each call's heap over the bandwidth, p99 over all calls)."""
    trace = tr.generate(params)
    sizes = [h + BASE_MIB for h in heaps_mib]
    classes = [f.cls for f in trace.functions]
    limit = results.nearest_rank([heaps_mib[f] / bandwidth_mib_s for _, f in trace.calls], 0.99)
    out = {}
    for p in POLICIES:
        flags = []
        simulate(trace.calls, sizes, classes, cap_mib, p, lead, reserve_mib, per_call=flags)
        lat = transfer_latencies(trace.calls, heaps_mib, flags, bandwidth_mib_s, channels)
        out[p] = {"p50_ms": 1e3 * results.nearest_rank(lat, 0.5), "p99_ms": 1e3 * results.nearest_rank(lat, 0.99),
                  "over": sum(1 for x in lat if x > 1.5 * limit)}
    return out, 1e3 * limit


def load_run(run_dir):
    """A bench/faas run's trace parameters, heaps (MiB) and cap (MiB), from
    its params.json."""
    with open(os.path.join(run_dir, "params.json")) as f:
        saved = json.load(f)
    return tr.Params(**saved["trace"]), saved["heaps_mib"], saved["params"]["cap"] / 2**20


def per_call_warmth(run_dir, lead=3.0, reserve_div=32):
    """{(function name, its call's ordinal from 0): warm} under the memext
    policy for a run's trace, cap and heaps."""
    params, heaps, cap = load_run(run_dir)
    trace = tr.generate(params)
    flags = []
    simulate(trace.calls, [h + BASE_MIB for h in heaps], [f.cls for f in trace.functions], cap,
             "memext", lead, cap / reserve_div if reserve_div > 0 else 0.0, per_call=flags)
    out, seen = {}, collections.Counter()
    for (_, i), warm in zip(trace.calls, flags):
        name = trace.functions[i].name
        out[(name, seen[name])] = warm
        seen[name] += 1
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir", help="a bench/faas results directory (its params.json)")
    ap.add_argument("--lead", type=float, default=3.0, help="memext's prefetch lead, s (default 3)")
    ap.add_argument("--reserve-div", type=int, default=32,
                    help="memext keeps 1/N of the cap free (default 32; 0: none)")
    ap.add_argument("--bandwidth", type=float, metavar="MIB_S",
                    help="the tier's bulk read-back bandwidth, MiB/s: adds each policy's latencies "
                         "at it (default: the run's results.json, if it has one tier)")
    ap.add_argument("--channels", type=int, default=1, help="transfers at a time at that bandwidth each (default 1)")
    a = ap.parse_args(argv)
    try:
        params, heaps, cap = load_run(a.run_dir)
    except (OSError, KeyError, TypeError, ValueError) as e:
        ap.error(f"{a.run_dir}: not a bench/faas run ({e})")
    reserve = cap / a.reserve_div if a.reserve_div > 0 else 0.0
    out, totals = bounds(params, heaps, cap, a.lead, reserve)
    cls = [c for c in tr.CLASSES if c in totals]
    print(f"{totals['all']} calls, cap {cap:.0f} MiB (reserve {reserve:.0f} MiB): warm calls per policy")
    print("| policy | warm | " + " | ".join(cls) + " |")
    print("|---|---|" + "---|" * len(cls))
    for p in POLICIES:
        w = out[p]
        cells = " | ".join(f"{w.get(c, 0)} of {totals[c]}" for c in cls)
        print(f"| {p} | {w.get('all', 0)} ({100 * w.get('all', 0) / totals['all']:.0f}%) | {cells} |")
    bw = a.bandwidth if a.bandwidth is not None else saved_bandwidth(a.run_dir)
    if bw is None:
        return 0
    if bw <= 0 or a.channels < 1:
        ap.error("--bandwidth and --channels must be positive")
    lat, limit = latency_bounds(params, heaps, cap, bw, a.channels, a.lead, reserve)
    print(f"\nat {bw:.0f} MiB/s, {a.channels} transfer(s) at a time (cold-call limit p99 {limit:.0f} ms; "
          f"the p99 target, 1.5x: {1.5 * limit:.0f} ms, allows {totals['all'] - math.ceil(0.99 * totals['all'])} calls over it)")
    print("| policy | p50 | p99 | calls over 1.5x the limit |")
    print("|---|---|---|---|")
    for p in POLICIES:
        r = lat[p]
        print(f"| {p} | {r['p50_ms']:.0f} ms | {r['p99_ms']:.0f} ms | {r['over']} |")
    return 0


def saved_bandwidth(run_dir):
    """The bulk read-back bandwidth a run measured (its results.json), when
    it measured one tier only."""
    try:
        with open(os.path.join(run_dir, "results.json")) as f:
            bw = json.load(f).get("bandwidth_mib_s") or {}
    except (OSError, ValueError):
        return None
    return next(iter(bw.values())) if len(bw) == 1 else None


if __name__ == "__main__":
    sys.exit(main())
