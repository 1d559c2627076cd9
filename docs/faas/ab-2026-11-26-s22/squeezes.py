#!/usr/bin/env python3
"""How a bench/faas run's daemon lowered its functions' limits into what
they held: the reclaimer's `reclaimed` events that took 1 ms or more (a hold
at the usage takes ~0 ms), split into lowerings to the floor (4 MiB) and
part of the way, and how many began within 50 ms after a wake seen between
ticks (`woke` or `onset` via an event or a poll), where the plan's lowered
limits go to the reclaimer without its push-outs.

Usage: squeezes.py RUN_DIR [RUN_DIR...]   (memext on zram, round 0)"""
import bisect
import collections
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "../../../bench"), os.path.join(HERE, "../../../bench/faas")]
import memextbench as mb  # noqa: E402
import timeline as tl  # noqa: E402

FLOOR = 4 << 20
NEAR_S = 0.05


def tally(d):
    events = mb.daemon_events(os.path.join(d, "memext-daemon-zram-r0.log.gz"))
    wakes = [e["at"] for e in events if e["event"] in ("woke", "onset") and e.get("via") in ("event", "poll")]
    lowerings = [(e["at"] - e["ms"] / 1000, e["to"]) for e in events
                 if e["event"] == "reclaimed" and e.get("ms", 0) >= tl.SQUEEZE_MS]
    wakes.sort()
    out = collections.Counter()
    for began, to in lowerings:
        i = bisect.bisect_right(wakes, began)
        after_wake = i > 0 and began - wakes[i - 1] < NEAR_S
        out[("to the floor" if to <= FLOOR + (FLOOR >> 3) else "part of the way",
             "after a wake between ticks" if after_wake else "else")] += 1
    return out


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for d in sys.argv[1:]:
        t = tally(d)
        print(os.path.basename(d.rstrip("/")) + ": " + ", ".join(f"{a}, {b}: {n}" for (a, b), n in sorted(t.items())))
