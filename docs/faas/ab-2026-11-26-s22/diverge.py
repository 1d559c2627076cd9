#!/usr/bin/env python3
"""Why a run lost calls that bound.py's memext order keeps warm: for each
call that was cold in the run, warm under the order, and whose function's
limit was lowered into what it held since its previous call (`squeezed`,
timeline.py), the functions resident in the run at that squeeze (status
sample after it: at least 80% of usage + swap resident, more than 8 MiB)
that the order had evicted by then, counted by their state, and for the
resting ones (idle, or active and quiet) whether they were held for a
predicted call, periodic, and costlier under the order than the function
squeezed (expected time to the next call x size, bound.py's estimate).

Usage: diverge.py RUN_DIR STATUS_SAMPLES[.gz]   (the sampler's file beside the run)"""
import bisect
import collections
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../bench/faas"))
import bound as b  # noqa: E402
import timeline as tl  # noqa: E402
import trace as tr  # noqa: E402


def samples(path, start):
    """[(trace time, {name: (usage MiB, swapped MiB, state, quiet, held)})]"""
    text = (gzip.open(path, "rt") if path.endswith(".gz") else open(path)).read()
    out = []
    for chunk in text.split("# ")[1:]:
        nl = chunk.index("\n")
        try:
            rows = json.loads(chunk[nl + 1:])
        except ValueError:
            continue
        out.append((float(chunk[:nl]) - start, {c["name"]: (c["usage_bytes"] / 2**20, c["swapped_bytes"] / 2**20,
                                                            c["state"], c["quiet"], c["held"]) for c in rows}))
    return out


def order_at(calls, sizes, classes, cap, until):
    """bound.py's memext policy (its default lead, the reserve at 1/32 of
    the cap) replayed up to `until`: (resident function indices, each
    one's call times)."""
    state = {}
    b.simulate(calls, sizes, classes, cap, "memext", 3.0, cap / 32, until=until, state=state)
    return state["resident"], collections.defaultdict(list, state["history"])


def main(d, status):
    meta, calls, events = tl.load(d, "zram", "memext", 0)
    params, heaps, cap = b.load_run(d)
    trace = tr.generate(params)
    names = [f.name for f in trace.functions]
    sizes = [h + b.BASE_MIB for h in heaps]
    snaps = samples(status, meta["trace_start_epoch"])
    times = [t for t, _ in snaps]
    warm_in_order = tl.bound_warmth(d)
    by_fn = collections.defaultdict(list)
    for c in calls:
        by_fn[c["function"]].append(c)
    states, resting, lost = collections.Counter(), collections.Counter(), 0
    for fn, cs in sorted(by_fn.items()):
        gaps = tl.calls_with_gaps(cs, events.get(meta["cgroups"][fn], []))
        for i, (c, gap) in enumerate(gaps):
            if tl.warmth(c) != "cold" or not warm_in_order.get((fn, i)) or tl.label(gap) != "squeezed":
                continue
            at = [t for t, e, _ in gap if e == "reclaimed"][-1]
            j = bisect.bisect_right(times, at)
            if j >= len(snaps):
                continue
            lost += 1
            res, hist = order_at(trace.calls, sizes, [f.cls for f in trace.functions], cap, at)
            in_order = {names[f] for f in res}
            k = names.index(fn)
            own = b.expected_wake_in(hist[k], at) * sizes[k] if hist[k] else None
            for name, (u, s, state, quiet, held) in snaps[j][1].items():
                if not name.startswith("fn") or name in in_order or u < 0.8 * (u + s) or u <= 8:
                    continue
                states[state + ("/quiet" if quiet else "")] += 1
                if state == "idle" or quiet:
                    x = names.index(name)
                    cx = b.expected_wake_in(hist[x], at) * sizes[x] if hist[x] else None
                    resting[("held" if held else "not held",
                             "periodic" if b.period(hist[x]) is not None else "not periodic",
                             "costlier than the one squeezed" if cx and own and cx > own else "not costlier")] += 1
    print(f"{lost} calls lost to a squeeze; resident in the run and evicted by the order at those squeezes, by state:")
    for k, v in states.most_common():
        print(f"  {k:<16} {v}")
    print("of them resting (idle, or active and quiet):")
    for k, v in resting.most_common():
        print(f"  {', '.join(k):<60} {v}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
