#!/usr/bin/env python3
"""Which calls the engine's history records: a call counts as recorded when
the daemon logged a `woke`, `onset` or `warm-call` for its function within
1.5 s after it; the others by the gap to the function's previous call, and
the debug `rested` readings that came with a call (its CPU judged rest).

Usage (from the repository root): recorded.py RUN_DIR [TIER] [ROUND]"""
import collections
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "bench", "faas"))
import timeline  # noqa: E402


def main():
    run = sys.argv[1] if len(sys.argv) > 1 else sys.exit(__doc__)
    tier = sys.argv[2] if len(sys.argv) > 2 else "zram"
    rnd = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    meta, calls, events = timeline.load(run, tier, "memext", rnd)
    by_fn = collections.defaultdict(list)
    for c in calls:
        by_fn[c["function"]].append(c["t"])
    recorded, missed = 0, collections.Counter()
    for fn, ts in by_fn.items():
        wakes = [t for t, e, _ in events.get(meta["cgroups"][fn], []) if e in ("woke", "onset", "warm-call")]
        ts.sort()
        for i, t in enumerate(ts):
            if any(0 <= w - t < 1.5 for w in wakes):
                recorded += 1
                continue
            gap = t - ts[i - 1] if i else None
            missed["first call" if gap is None else "within 2 s of the previous" if gap < 2
                   else "2-10 s after it" if gap < 10 else "10 s or more after it"] += 1
    print(f"{len(calls)} calls; recorded as a wake, onset or warm call: {recorded}")
    for k, n in missed.most_common():
        print(f"  not recorded, {k}: {n}")
    inv = {v: k for k, v in meta["cgroups"].items()}
    rested = collections.Counter()
    with timeline.open_log(run, tier, "memext", rnd) as f:
        for e in timeline.json_lines(f):
            fn = inv.get(e.get("context"))
            if e.get("event") != "rested" or fn is None:
                continue
            t = timeline.epoch(e["timestamp"]) - meta["trace_start_epoch"]
            span = e.get("span_ms", 1000) / 1e3
            call = any(t - span - 0.05 <= c <= t for c in by_fn[fn])
            key = ("with a call" if call else "no call", "pages in" if e.get("resident") else "pages out",
                   "rest learned" if e.get("allowance_us") is not None else "rest not learned yet")
            rested[key] += 1
    print("readings judged rest that used half a call's CPU or more (`rested`):")
    for k, n in sorted(rested.items()):
        print(f"  {', '.join(k)}: {n}")


if __name__ == "__main__":
    main()
