#!/usr/bin/env python3
"""Replays what memext's history would have predicted in a bench/faas run.

For each function, the wakes its daemon recorded (log events woke, onset,
warm-call: what history.rs records) are replayed into three period rules,
a Python copy of each (not the engine's code):

  strict       every one of the last (up to 8) intervals within 20% of
               their median (history.rs before e9e7936);
  skip         the same, else extra wakes between two on the schedule
               skipped: at most two, one per three agreeing intervals kept
               (e9e7936);
  skip+missed  also an interval of two or three periods (within 20% of one
               period) taken as wakes that went unseen, counted like skips.

Per run and rule it prints:
  hit     timer calls a prediction made from the wakes before the call's
          lead (3 s) had due at the call (next - 3 s <= call <= next + P/2);
  false   predictions (one per recorded wake) no call of the function met;
  flipped timer calls that were due within the lead and then not, before
          the call (a wake recorded in between moved the schedule on).

  python3 replay.py RUN_DIR...      (bench/faas results directories)
"""
import csv
import datetime
import glob
import gzip
import json
import os
import sys

TOL, LEAD, MIN_IV, MAX_SKIPPED = 0.2, 3.0, 2, 2
MISSED = True
RECORDED = ('"event":"woke"', '"event":"onset"', '"event":"warm-call"')


def median(v):
    s = sorted(v)
    return s[len(s) // 2]


def agree(iv, m):
    return m > 0 and all(abs(d - m) <= TOL * m for d in iv)


def strict(w):
    """(last wake on the schedule, period) or None."""
    w = w[-9:]
    if len(w) < MIN_IV + 1:
        return None
    iv = [b - a for a, b in zip(w, w[1:])]
    m = median(iv)
    return (w[-1], m) if agree(iv, m) else None


def skip(w):
    s = strict(w)
    if s:
        return s
    w = w[-9:]
    if len(w) < MIN_IV + 1:
        return None
    m = median([b - a for a, b in zip(w, w[1:])])
    best = None
    for start in range(min(3, len(w))):
        on, kept, skipped = w[start], [], start
        for t in w[start + 1:]:
            d = t - on
            if d < (1 - TOL) * m:
                skipped += 1
                continue
            k = min(3, max(1, round(d / m))) if MISSED else 1
            if k > 1 and abs(d - k * m) <= TOL * m:
                skipped += k - 1  # wakes that went unseen
                d /= k
            kept.append(d)
            on = t
        if len(kept) < MIN_IV or skipped > MAX_SKIPPED or 3 * skipped > len(kept):
            continue
        km = median(kept)
        if agree(kept, km) and (best is None or skipped < best[0]):
            best = (skipped, on, km)
    return best[1:] if best else None


def skip_extra(w):
    """`skip` without the missed wakes (e9e7936)."""
    global MISSED
    MISSED = False
    try:
        return skip(w)
    finally:
        MISSED = True


def due(rule, wakes, t):
    s = rule([w for w in wakes if w < t])
    return bool(s) and s[0] + s[1] - LEAD <= t <= s[0] + s[1] + s[1] / 2


def load(run):
    meta = json.load(open(glob.glob(run + "/functions-*.json")[0]))
    start = meta["trace_start_epoch"]
    by_cgroup = {v: k for k, v in meta["cgroups"].items()}
    calls = {}
    for r in csv.DictReader(open(glob.glob(run + "/calls-*.csv")[0])):
        calls.setdefault(r["function"], (r["class"], []))[1].append(float(r["t"]))
    wakes = {}
    log = glob.glob(run + "/*daemon*.log*")[0]
    with (gzip.open if log.endswith(".gz") else open)(log, "rt") as f:
        for line in f:
            if not any(k in line for k in RECORDED):
                continue
            e = json.loads(line)
            fn = by_cgroup.get(e.get("context"))
            if fn:
                at = datetime.datetime.fromisoformat(e["timestamp"].replace("Z", "+00:00")).timestamp()
                wakes.setdefault(fn, []).append(at - start)
    return calls, {k: sorted(v) for k, v in wakes.items()}


def replay(run, rule):
    calls, wakes = load(run)
    hit = false = flipped = 0
    for fn, (cls, times) in calls.items():
        w = wakes.get(fn, [])
        for i in range(1, len(w) + 1):
            s = rule(w[:i])
            if s and s[0] + s[1] <= 180 and not any(
                    s[0] + s[1] - LEAD <= c <= s[0] + s[1] * 1.5 for c in times):
                false += 1
        if cls != "timer":
            continue
        for c in times:
            hit += due(rule, [x for x in w if x < c - LEAD], c)
            was = False
            t = c - LEAD - 1
            while t < c - 0.05:
                now = due(rule, w, t)
                if was and not now:
                    flipped += 1
                    break
                was = was or now
                t += 0.1
    return hit, false, flipped


if __name__ == "__main__":
    for run in sys.argv[1:]:
        print(os.path.basename(run.rstrip("/")), "  ".join(
            "{}: hit {} false {} flipped {}".format(name, *replay(run, rule))
            for name, rule in (("strict", strict), ("skip", skip_extra), ("skip+missed", skip))))
