#!/usr/bin/env python3
"""How the memext daemon saw a bench/faas run's calls, from its log: each
wake, onset or warm call it recorded matched against the calls of the trace.

- *No call*: a wake, onset or warm call with no call of that function from 0.5 s
  before to 1.2 s after it: recorded in the function's history (a timer's
  period broken by it) and read back for nothing. Counted up to 5 s before
  the trace's end (the functions are stopped after it). Of those, how many
  came within 3 s after memext took memory from the function (a push-out,
  a lowering by the reclaimer).
- *Idle at its event*: a call whose first faults fired the function's
  kernel event and whose reading was taken for the function going idle
  (`became-idle ... event` within 0.3 s after the call): its wake is seen
  later, at a tick or a poll.
- *Unseen*: calls with no wake or onset of their function from 0.5 s
  before to 1.2 s after them, by class and warm or cold: missing from the
  function's history (a timer's period broken by the gap, a rate
  undercounted); and how many cold calls of the same function came after
  the first unseen one.
- *Seen after*: for each cold call (at least 100 major faults), the time
  from the call to the first wake or onset recorded for its function, in
  buckets, with the calls' latency.
- *Why unseen*: where the daemon ran with `MEMEXT_LOG=info,memext::daemon::events=debug`
  (its `rested` readings: a resting function's reading that was no call but
  used half a call's CPU or more, with what its rest allowed), the calls not
  seen that came after a quiet gap (over `QUIET_GAP` s since the function's
  previous call) by why: a resting reading with its pages in under its rest's
  allowance (with the readings' CPU and the allowances), its rest not learned
  yet, its pages not in (only the activity thresholds judge it), or no
  resting reading of it at all (it was waking or busy, or used less).
- *No call by its touch*: the daemon's `no-call` readings (a resting
  function's CPU said "call", what its processes touched said no:
  `memext_engine::touch`), by whether a call of it came from 0.5 s before
  to 1.2 s after (a call turned away) or not (a burst told from a call).
- *Seen by*: the same cold calls by how that wake was seen: its kernel
  event, a poll of its CPU between ticks, or a tick (session 39: a quarter
  of them by a poll, 25-28 ms after the call, against 3-5 ms by an event,
  while their functions' limits were being rewritten).

Usage: wakes.py DIR [DIR ...] [--tier zram] [--mode memext] [--round 0]"""
import argparse
import collections
import csv
import gzip
import json
import os
import statistics

import timeline

QUIET_GAP = 3.0  # s since the function's previous call: a call its history should hold
RESTED_NEAR = (-0.1, 1.3)  # a resting reading this close after a call (s) read it
MATCH = (-0.5, 1.2)  # a wake or onset this close to a call (s) is that call's
TOOK_WITHIN = 3.0
IDLE_AT_EVENT = 0.3
END_MARGIN = 5.0
READ = ("woke", "onset", "warm-call", "call", "became-idle", "pushing-out", "reclaimed", "no-call")
CALLS = ("woke", "onset", "warm-call", "call")  # what the daemon logs for a call it saw
BUCKETS = ((0.03, "< 30 ms"), (0.1, "30-100 ms"), (0.3, "100-300 ms"), (1.0, "0.3-1 s"))


def parse(lines, cgroups, start):
    """{cgroup: [(trace time, event, via)]} for the events this reads:
    wakes, onsets, went-idle, and memext taking memory."""
    return timeline.daemon_events(lines, cgroups, start, events=READ)


def tally(calls, events, trace_end):
    """The three counts above, from {function: sorted call times},
    {function: [(t, event, via)]} and the trace's length."""
    no_call = collections.Counter()
    for fn, evs in events.items():
        times = calls.get(fn, [])
        took = [t for t, ev, _ in evs if ev in ("pushing-out", "reclaimed")]
        for t, ev, _ in evs:
            if ev not in CALLS or t > trace_end - END_MARGIN:
                continue
            if any(MATCH[0] <= t - c <= MATCH[1] for c in times):
                continue
            no_call["after memext took memory" if any(0 <= t - x <= TOOK_WITHIN for x in took) else "other"] += 1
    return no_call


def touch_verdicts(calls, events, trace_end):
    """The `no-call` readings by whether a call of the function was near:
    Counter of "a call near" and "no call near", from {function: sorted
    call times}, {function: [(t, event, via)]} and the trace's length."""
    out = collections.Counter()
    for fn, evs in events.items():
        times = calls.get(fn, [])
        for t, ev, _ in evs:
            if ev != "no-call" or t > trace_end - END_MARGIN:
                continue
            near = any(MATCH[0] <= t - c <= MATCH[1] for c in times)
            out["a call near" if near else "no call near"] += 1
    return out


def seen(call_t, evs):
    return any(ev in CALLS and MATCH[0] <= t - call_t <= MATCH[1] for t, ev, _ in evs)


def unseen(rows, events):
    """({(class, "warm"/"cold"): calls not seen}, cold calls after one not
    seen), from the calls (dicts of calls-*.csv, in time order) and
    {function: [(t, event, via)]}."""
    missed, cold_after, gone = collections.Counter(), 0, set()
    for r in rows:
        fn, warm = r["function"], int(r.get("majflt") or 0) < timeline.WARM_MAJFLT
        if fn in gone and not warm:
            cold_after += 1
        if not seen(float(r["t"]), events.get(fn, [])):
            missed[(r["class"], "warm" if warm else "cold")] += 1
            gone.add(fn)
    return missed, cold_after


def parse_rested(lines, cgroups, start):
    """{cgroup: [(trace time s, cpu µs, allowance µs or None, resident)]}
    from the daemon's debug `rested` readings."""
    out = collections.defaultdict(list)
    for raw in lines:
        if '"rested"' not in raw:
            continue
        try:
            e = json.loads(raw)
        except ValueError:
            continue
        if e.get("event") != "rested" or e.get("context") not in cgroups:
            continue
        t = timeline.epoch(e["timestamp"]) - start
        out[e["context"]].append((t, e.get("cpu_us", 0), e.get("allowance_us"), bool(e.get("resident"))))
    return out


def why_unseen(call_t, rested):
    """Why a call after a quiet gap went unseen, from its function's
    resting readings [(t, cpu, allowance, resident)]: (reason, the readings
    under an allowance as [(cpu, allowance)])."""
    near = [r for r in rested if RESTED_NEAR[0] <= r[0] - call_t <= RESTED_NEAR[1]]
    if not near:
        return "no resting reading", []
    judged = [(cpu, allow) for _, cpu, allow, resident in near if resident and allow is not None]
    if judged:
        return "under its rest's allowance", judged
    if any(resident for *_, resident in near):
        return "rest not learned yet", []
    return "pages not in", []


def unseen_after_gap(rows, events, rested):
    """{reason: [each call's readings under an allowance, [(cpu,
    allowance)]]} for the calls not seen that came after a quiet gap
    (`QUIET_GAP`), from the calls in time order,
    {function: [(t, event, via)]} and {function: [resting readings]}."""
    out, prev = collections.defaultdict(list), {}
    for r in rows:
        fn, t = r["function"], float(r["t"])
        gap = t - prev.get(fn, float("-inf"))
        prev[fn] = t
        if gap > QUIET_GAP and not seen(t, events.get(fn, [])):
            reason, readings = why_unseen(t, rested.get(fn, []))
            out[reason].append(readings)
    return out


def idle_at_event(call_t, evs):
    return any(ev == "became-idle" and via == "event" and 0 <= t - call_t <= IDLE_AT_EVENT
               for t, ev, via in evs)


def seen_after(call_t, evs):
    """Seconds from the call to the first wake or onset after it (None: none within 1 s)."""
    how = seen_by(call_t, evs)
    return how and how[1]


def seen_by(call_t, evs):
    """How the first wake or onset after the call (within 1 s) was seen,
    and when: (via, seconds after the call), or None."""
    after = [(t - call_t, via) for t, ev, via in evs if ev in ("woke", "onset") and -0.05 <= t - call_t <= 1.0]
    if not after:
        return None
    dt, via = min(after)
    return via or "?", dt


def bucket(dt):
    if dt is None:
        return "not seen within 1 s"
    for hi, name in BUCKETS:
        if dt < hi:
            return name
    return "0.3-1 s"


def report(d, tier, mode, rnd):
    with open(os.path.join(d, f"functions-{tier}-{mode}-r{rnd}.json")) as f:
        meta = json.load(f)
    with open(os.path.join(d, "params.json")) as f:
        trace_end = json.load(f)["trace"]["seconds"]
    with open(os.path.join(d, f"calls-{tier}-{mode}-r{rnd}.csv")) as f:
        rows = list(csv.DictReader(f))
    log = os.path.join(d, f"{mode}-daemon-{tier}-r{rnd}.log")
    opener = (lambda: gzip.open(log + ".gz", "rt")) if not os.path.exists(log) else (lambda: open(log))
    with opener() as f:
        lines = f.readlines()
    by_cg = parse(lines, set(meta["cgroups"].values()), meta["trace_start_epoch"])
    events = {fn: by_cg.get(cg, []) for fn, cg in meta["cgroups"].items()}
    rested_cg = parse_rested(lines, set(meta["cgroups"].values()), meta["trace_start_epoch"])
    rested = {fn: rested_cg.get(cg, []) for fn, cg in meta["cgroups"].items()}
    calls = collections.defaultdict(list)
    for r in rows:
        calls[r["function"]].append(float(r["t"]))
    no_call = tally(calls, events, trace_end)
    idle, buckets, seen_via = [], collections.defaultdict(list), collections.defaultdict(list)
    for r in rows:
        t, ms, evs = float(r["t"]), float(r["latency_ms"]), events.get(r["function"], [])
        if idle_at_event(t, evs):
            idle.append(ms)
        if int(r.get("majflt") or 0) >= timeline.WARM_MAJFLT:
            buckets[bucket(seen_after(t, evs))].append(ms)
            how = seen_by(t, evs)
            if how:
                seen_via[how[0]].append((how[1], ms))
    print(f"{d}: {len(rows)} calls")
    print(f"  wakes, onsets and warm calls with no call: {sum(no_call.values())}"
          f" ({no_call['after memext took memory']} within {TOOK_WITHIN:.0f} s after memext took memory)")
    verdicts = touch_verdicts(calls, events, trace_end)
    if verdicts:
        print(f"  readings whose CPU said call and touch said no: {sum(verdicts.values())}"
              f" ({verdicts['no call near']} with no call near, {verdicts['a call near']} with a call near)")
    med = f", p50 {statistics.median(idle):.0f} ms, max {max(idle):.0f} ms" if idle else ""
    print(f"  calls taken for the function going idle at their event: {len(idle)}{med}")
    missed, cold_after = unseen(sorted(rows, key=lambda r: float(r["t"])), events)
    by = ", ".join(f"{c} {w} {n}" for (c, w), n in sorted(missed.items()))
    print(f"  calls not seen: {sum(missed.values())} ({by or 'none'});"
          f" cold calls of their functions after one: {cold_after}")
    if rested_cg:
        why = unseen_after_gap(sorted(rows, key=lambda r: float(r["t"])), events, rested)
        print(f"  calls not seen after over {QUIET_GAP:.0f} s without one, by why (the daemon's rested readings):")
        for reason, v in sorted(why.items(), key=lambda kv: -len(kv[1])):
            got = [x for readings in v for x in readings]
            detail = ""
            if got:
                cpu, allow = sorted(c for c, _ in got), sorted(a for _, a in got)
                detail = (f"; their readings {cpu[0] / 1e3:.1f}-{cpu[-1] / 1e3:.1f} ms of CPU"
                          f" against {allow[0] / 1e3:.1f}-{allow[-1] / 1e3:.1f} ms allowed")
            print(f"    {reason:<28} {len(v):4d}{detail}")
    print("  cold calls by when their wake was seen:")
    for name in [n for _, n in BUCKETS] + ["not seen within 1 s"]:
        v = buckets.get(name)
        if v:
            print(f"    {name:<20} {len(v):4d}  p50 {statistics.median(v):6.0f} ms  max {max(v):6.0f} ms")
    print("  cold calls by how their wake was seen (seen after the call; the call's latency):")
    for via, v in sorted(seen_via.items(), key=lambda kv: -len(kv[1])):
        dts, ms = [1e3 * dt for dt, _ in v], [m for _, m in v]
        print(f"    by {via:<8} {len(v):4d}  seen p50 {statistics.median(dts):5.0f} ms"
              f"  latency p50 {statistics.median(ms):6.0f} ms")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+", help="bench/faas results directories of a memext mode")
    ap.add_argument("--tier", default="zram")
    ap.add_argument("--mode", default="memext")
    ap.add_argument("--round", type=int, default=0)
    a = ap.parse_args()
    for d in a.dirs:
        try:
            report(d, a.tier, a.mode, a.round)
        except FileNotFoundError as e:
            raise SystemExit(f"{e.filename}: missing (a memext mode's run of bench/faas writes it)")


if __name__ == "__main__":
    main()
