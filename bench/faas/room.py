#!/usr/bin/env python3
"""Where the room went when a function was squeezed before a call the keep
order would have found warm.

Reads a bench/faas run whose daemon ran with
`MEMEXT_LOG=info,memext::daemon::events=debug`: its log then has a `room`
line for every plan that kept a resting function in part or not at all,
with each step of the order of service's share of the capacity (floors,
woken, prefetched, busy, kept, refilled, margins, ...) and the functions it
squeezed, the most valuable first. For each call that came cold although
bound.py's keep order (transfers free, functions whole) would have had its
function warm, and whose function the daemon squeezed since its previous
call (timeline.py's `squeezed` or `out`), it finds the first plan in that
gap that gave the function less than half of what it held, and prints
that plan's account; then the medians over those calls.

Usage: room.py DIR [--tier zram] [--mode memext] [--round 0] [--calls]"""
import argparse
import collections
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import timeline  # noqa: E402

MIB = 2**20
STEPS = ("floors", "woken", "queued", "prefetched", "busy", "kept", "refilled", "margins", "spread", "left")


def room_events(lines, start):
    """[(trace time s, account dict)] from the daemon's JSON log lines: the
    `room` events, each with its `squeezed` list parsed."""
    out = []
    for line in lines:
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("event") != "room" or "timestamp" not in e:
            continue
        try:
            e["squeezed"] = json.loads(e.get("squeezed") or "[]")
        except ValueError:
            continue
        out.append((timeline.epoch(e["timestamp"]) - start, e))
    return out


def squeeze_of(rooms, cgroup, t0, t1):
    """The first plan in [t0, t1) that gave `cgroup` less than half of what
    it held: (time, account, its place among the squeezed (0: the most
    valuable of them), its entry), or None."""
    for t, acct in rooms:
        if not t0 <= t < t1:
            continue
        for place, s in enumerate(acct["squeezed"]):
            if s.get("key") == cgroup and s.get("target", 0) * 2 < s.get("holds", 0):
                return t, acct, place, s
    return None


def entries_of(rooms, cgroup, t0, t1):
    """How many plans in [t0, t1) squeezed `cgroup` at all (any amount)."""
    return sum(1 for t, acct in rooms if t0 <= t < t1 and any(s.get("key") == cgroup for s in acct["squeezed"]))


def wake_in_s(entry):
    """The squeezed entry's expected time to its next call, s (None: none)."""
    d = entry.get("expected_wake_in")
    if not isinstance(d, dict):
        return None
    return d.get("secs", 0) + d.get("nanos", 0) / 1e9


def lost_calls(meta, calls, events, bounds):
    """The calls that came cold, that the keep order had warm, and whose
    function the daemon squeezed or pushed out since its previous call:
    [(call, start of the gap)]."""
    by_fn = collections.defaultdict(list)
    for c in calls:
        by_fn[c["function"]].append(c)
    out = []
    for fn, cs in sorted(by_fn.items()):
        evs = events.get(meta["cgroups"].get(fn), [])
        prev = float("-inf")
        for i, (c, gap) in enumerate(timeline.calls_with_gaps(cs, evs)):
            lost = timeline.warmth(c) == "cold" and bounds.get((fn, i))
            if lost and timeline.label(gap) in ("squeezed", "out"):
                out.append((c, prev))
            prev = c["t"]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", help="a bench/faas results directory")
    ap.add_argument("--tier", default="zram")
    ap.add_argument("--mode", default="memext")
    ap.add_argument("--round", type=int, default=0)
    ap.add_argument("--calls", action="store_true", help="each call's plan, not only the medians")
    a = ap.parse_args()
    try:
        meta, calls, events = timeline.load(a.dir, a.tier, a.mode, a.round)
        bounds = timeline.bound_warmth(a.dir)
    except FileNotFoundError as e:
        raise SystemExit(f"{e.filename}: missing (a memext mode's run of bench/faas writes it)")
    with timeline.open_log(a.dir, a.tier, a.mode, a.round) as f:
        rooms = room_events(f, meta["trace_start_epoch"])
    if not rooms:
        raise SystemExit(f"{a.dir}: no `room` events in its {a.mode} daemon's log on {a.tier} (run the daemon "
                         "with MEMEXT_LOG=info,memext::daemon::events=debug)")
    lost = lost_calls(meta, calls, events, bounds)
    found, in_part = [], 0
    for c, t0 in lost:
        hit = squeeze_of(rooms, meta["cgroups"][c["function"]], t0, c["t"])
        if hit is None:
            in_part += entries_of(rooms, meta["cgroups"][c["function"]], t0, c["t"]) > 0
            continue
        found.append((c, hit))
        if a.calls:
            t, acct, place, s = hit
            steps = " ".join(f"{k} {acct.get(k, 0) / MIB:.0f}" for k in STEPS)
            wake = wake_in_s(s)
            print(f"{c['function']} call at {c['t']:.2f} ({c['latency_ms']:.0f} ms): squeezed at {t:.2f} "
                  f"({acct.get('via', 'tick')}), "
                  f"{s['holds'] / MIB:.0f} -> {s['target'] / MIB:.0f} MiB (whole {s['whole'] / MIB:.0f}), "
                  f"expected in {'-' if wake is None else f'{wake:.1f} s'} (came {c['t'] - t:.1f} s later), "
                  f"place {place} of {len(acct['squeezed'])} squeezed, {acct.get('kept_whole', 0)} kept whole; "
                  f"MiB: {steps}")
    print(f"{len(lost)} calls cold that the keep order had warm, their function squeezed or out since its "
          f"previous call; {len(found)} with a plan that squeezed it below half of what it held "
          f"({sum(1 for _, h in found if h[1].get('via') == 'wake')} of them serving a wake between ticks), "
          f"{in_part} squeezed by less, {len(lost) - len(found) - in_part} by no plan")
    if not found:
        return
    med = lambda xs: statistics.median(xs) if xs else float("nan")  # noqa: E731
    print("medians at those plans (MiB):", ", ".join(
        f"{k} {med([h[1].get(k, 0) / MIB for _, h in found]):.0f}" for k in STEPS))
    print(f"  squeezed at the plan {med([len(h[1]['squeezed']) for _, h in found]):.0f}, kept whole "
          f"{med([h[1].get('kept_whole', 0) for _, h in found]):.0f}, the function's place among the squeezed "
          f"{med([h[2] for _, h in found]):.0f}, first of them in {sum(1 for _, h in found if h[2] == 0)} calls")
    times = collections.defaultdict(list)
    for c in calls:
        times[c["function"]].append(c["t"])
    waits = []
    for c, (t, _, _, s) in found:
        before = sorted(x for x in times[c["function"]] if x < t)
        if wake_in_s(s) is not None and before:
            waits.append((wake_in_s(s), timeline.faas_bound.expected_wake_in(before, t), c["t"] - t))
    print(f"  next call expected by the engine {med([w[0] for w in waits]):.1f} s after the squeeze, by bound.py's "
          f"order from every call before it {med([w[1] for w in waits]):.1f} s; it came {med([w[2] for w in waits]):.1f} s "
          f"after (medians of {len(waits)})")


if __name__ == "__main__":
    main()
