#!/usr/bin/env python3
"""Replays bench/faas runs' recorded wakes (session 26's `replay.py`) into
session 27's rule (skip+missed, wakes recorded within 3 s after one read
as one, the first standing for it) and session 28's two changes to it:
the precursor (a wake recorded within 3 s before the call the schedule
had due, with nothing recorded since, leaves that call due until 3 s
after it; history.rs `precursor`) and an extra wake counted as half an
unseen one (history.rs `chain`), each alone and both. A Python copy of
the rules, not the engine's code.

Per run and in total: hit/false/flipped (see replay.py), where a call's
`hit` is judged at the call with the wakes recorded before its lead, and
`flipped` counts timer calls that were due within the lead and then not,
before the call came.

  python3 replay_precursor.py RUN_DIR...
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ab-2026-11-26-s26"))
import replay as R  # noqa: E402

SAME = 3.0


def distinct(wakes):
    out = []
    for t in wakes:
        if not out or t - out[-1] >= SAME:
            out.append(t)
    return out


def same_wake(wakes, now, extra=1.0, lead_cost=1.0):
    """Session 27's rule: (last wake on the schedule, period) or None; an
    extra wake counting `extra` of an unseen one, and each wake left out
    before a chain's start `lead_cost` of one (session 50's
    replay_start.py varies it)."""
    w = distinct(wakes)
    strict = R.strict(w)
    if strict or extra == 1.0:
        return strict or R.skip(w)
    w = w[-9:]
    if len(w) < R.MIN_IV + 1:
        return None
    m = R.median([b - a for a, b in zip(w, w[1:])])
    best = None
    for start in range(min(3, len(w))):
        on, kept, irregular = w[start], [], lead_cost * start
        for t in w[start + 1:]:
            d = t - on
            if d < (1 - R.TOL) * m:
                irregular += extra
                continue
            k = min(3, max(1, round(d / m)))
            if k > 1 and abs(d - k * m) <= R.TOL * m:
                irregular += k - 1
                d /= k
            kept.append(d)
            on = t
        if len(kept) < R.MIN_IV or irregular > R.MAX_SKIPPED or 3 * irregular > len(kept):
            continue
        km = R.median(kept)
        if R.agree(kept, km) and (best is None or irregular < best[0]):
            best = (irregular, on, km)
    return best[1:] if best else None


def extra_half(wakes, now):
    return same_wake(wakes, now, extra=0.5)


def with_precursor(rule):
    """`rule`, but a lone record within 3 s before the call due leaves it
    due until 3 s after the record."""
    def read(wakes, now):
        if len(wakes) >= 2 and wakes[-1] - wakes[-2] >= SAME and now < wakes[-1] + SAME:
            before = rule(wakes[:-1], now)
            if before and 0 < before[0] + before[1] - wakes[-1] <= SAME:
                return before
        return rule(wakes, now)
    return read


def due(rule, wakes, now, recorded_before=None):
    cut = now if recorded_before is None else recorded_before
    s = rule([w for w in wakes if w < cut], now)
    return bool(s) and s[0] + s[1] - R.LEAD <= now <= s[0] + s[1] + s[1] / 2


def replay(run, rule):
    calls, wakes = R.load(run)
    hit = false = flipped = 0
    for fn, (cls, times) in calls.items():
        w = wakes.get(fn, [])
        for i in range(1, len(w) + 1):
            s = rule(w[:i], w[i - 1] + 0.01)
            if s and s[0] + s[1] <= 180 and not any(
                    s[0] + s[1] - R.LEAD <= c <= s[0] + s[1] * 1.5 for c in times):
                false += 1
        if cls != "timer":
            continue
        for c in times:
            hit += due(rule, w, c, recorded_before=c - R.LEAD)
            was, t = False, c - R.LEAD - 1
            while t < c - 0.05:
                now = due(rule, w, t)
                if was and not now:
                    flipped += 1
                    break
                was = was or now
                t += 0.1
    return hit, false, flipped


if __name__ == "__main__":
    rules = (("same-wake", same_wake), ("precursor", with_precursor(same_wake)),
             ("extra-half", extra_half), ("both", with_precursor(extra_half)))
    total = {name: [0, 0, 0] for name, _ in rules}
    for run in sys.argv[1:]:
        row = []
        for name, rule in rules:
            counts = replay(run, rule)
            total[name] = [a + b for a, b in zip(total[name], counts)]
            row.append("{} {}/{}/{}".format(name, *counts))
        print(os.path.basename(run.rstrip("/")), "  ".join(row), flush=True)
    print("total (hit/false/flipped):", "  ".join("{} {}/{}/{}".format(n, *v) for n, v in total.items()))
