#!/usr/bin/env python3
"""What the memext daemon did to each function between its calls: reads a
bench/faas results directory's calls-TIER-MODE-rN.csv, functions-TIER-MODE-rN.json
(each function's cgroup, the trace's start) and MODE-daemon-TIER-rN.log (the
daemon's JSON log, or the same gzipped) and prints, per function of a class, its calls and the
daemon's events for its context on the trace's clock. The summary tallies
calls by what the daemon did since the function's previous call (a periodic
bring-back, a push-out, a squeeze of its limit, nothing) and their latency.

With --bound, each call is also marked with what bound.py's memext policy
(the engine's keep order, transfers free) would have made of it, and the
summary crosses the two: the calls the run lost that the order would have
kept, by what the daemon did.

Usage: timeline.py DIR [--tier zram] [--mode memext] [--round 0]
                       [--class timer] [--function fn0014] [--summary] [--bound]"""
import argparse
import collections
import csv
import datetime
import gzip
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bound as faas_bound  # noqa: E402

WARM_MAJFLT = 100  # a call with fewer major faults in its handler is warm (as absum.py)

# The engine events a call is read against (see crates/memext/src/daemon/events.rs).
EVENTS = ("became-idle", "woke", "onset", "warm-call", "call", "settled", "bringing-back", "pushing-out", "frozen",
          "thawed", "read-back", "reclaimed")
SQUEEZE_MS = 1.0  # a lowering of the limit that took this long reclaimed pages (a hold at the usage takes ~0 ms)


def epoch(ts):
    """A tracing timestamp (RFC 3339, UTC) as seconds since the epoch."""
    return datetime.datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


def json_lines(lines):
    """The daemon's JSON log lines, parsed; other lines are skipped."""
    for line in lines:
        try:
            yield json.loads(line)
        except ValueError:
            continue


def daemon_events(lines, cgroups, start, events=EVENTS):
    """{cgroup: [(trace time s, event, detail)]} from the daemon's JSON log
    lines, for the cgroups and `events` given (detail: a bring-back's reason,
    else how the transition was seen, `via`); non-JSON lines are skipped."""
    out = collections.defaultdict(list)
    for e in json_lines(lines):
        ctx, ev = e.get("context"), e.get("event")
        if ctx not in cgroups or ev not in events or "timestamp" not in e:
            continue
        detail = e.get("reason") or e.get("via") or ""
        if ev == "reclaimed":
            if e.get("ms", 0) < SQUEEZE_MS:
                continue  # held at what it holds: nothing paged
            detail = f"to {e.get('to', 0) / 2**20:.0f} MiB in {e.get('ms', 0):.0f} ms"
        elif ev == "read-back":
            detail = f"{e.get('bytes', 0) / 2**20:.0f} MiB in {e.get('seconds', 0) * 1e3:.0f} ms"
        elif ev == "pushing-out":
            detail = f"keeping {e.get('keep_bytes', 0) / 2**20:.0f} MiB"
        out[ctx].append((epoch(e["timestamp"]) - start, ev, detail))
    return out


def label(events):
    """What the daemon did to a function between two of its calls, from the
    events in that gap: the last bring-back's reason if one ran after the
    last push-out, `out` if it was pushed out and not brought back,
    `squeezed` if its limit was lowered into what it held with no push-out
    (a plan that gave it less than it held, its pages reclaimed by the
    kernel at the limit) since, else `kept`."""
    state = "kept"
    for _, ev, detail in events:
        if ev == "pushing-out":
            state = "out"
        elif ev == "bringing-back":
            state = f"back:{detail}"
        elif ev == "reclaimed" and state != "out":
            state = "squeezed"
    return state


def calls_with_gaps(calls, events):
    """Each call of one function (sorted by time) with the daemon's events
    since the previous call: [(call, [events])]."""
    out, prev = [], float("-inf")
    for c in sorted(calls, key=lambda c: c["t"]):
        out.append((c, [e for e in events if prev <= e[0] < c["t"]]))
        prev = c["t"]
    return out


def summarize(rows):
    """{label: (calls, p50 ms, max ms)} over [(label, latency ms)]."""
    by = collections.defaultdict(list)
    for lab, ms in rows:
        by[lab].append(ms)
    return {lab: (len(v), statistics.median(v), max(v)) for lab, v in sorted(by.items())}


def bound_warmth(d):
    """{(function name, call ordinal from 0): warm} under bound.py's memext
    policy for the run's trace, cap and heaps (its default lead and reserve)."""
    return faas_bound.per_call_warmth(d)


def warmth(call):
    """`warm` or `cold` from the handler's major faults (`?` if not counted)."""
    try:
        return "warm" if int(call["majflt"]) < WARM_MAJFLT else "cold"
    except (KeyError, TypeError, ValueError):
        return "?"


def open_log(d, tier, mode, rnd):
    """The daemon's log of a run (MODE-daemon-TIER-rN.log, or the same
    gzipped), open for reading text."""
    log = os.path.join(d, f"{mode}-daemon-{tier}-r{rnd}.log")
    if not os.path.exists(log) and os.path.exists(log + ".gz"):
        return gzip.open(log + ".gz", "rt")
    return open(log)


def load(d, tier, mode, rnd):
    with open(os.path.join(d, f"functions-{tier}-{mode}-r{rnd}.json")) as f:
        meta = json.load(f)
    with open(os.path.join(d, f"calls-{tier}-{mode}-r{rnd}.csv")) as f:
        calls = [dict(r, t=float(r["t"]), latency_ms=float(r["latency_ms"])) for r in csv.DictReader(f)]
    with open_log(d, tier, mode, rnd) as f:
        events = daemon_events(f, set(meta["cgroups"].values()), meta["trace_start_epoch"])
    return meta, calls, events


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", help="a bench/faas results directory")
    ap.add_argument("--tier", default="zram")
    ap.add_argument("--mode", default="memext")
    ap.add_argument("--round", type=int, default=0)
    ap.add_argument("--class", dest="cls", default="timer", help="timer, poisson, bursty or all")
    ap.add_argument("--function", help="only this function")
    ap.add_argument("--summary", action="store_true", help="only the tally")
    ap.add_argument("--bound", action="store_true",
                    help="cross each call with bound.py's memext policy (needs params.json)")
    a = ap.parse_args()
    try:
        meta, calls, events = load(a.dir, a.tier, a.mode, a.round)
    except FileNotFoundError as e:
        raise SystemExit(f"{e.filename}: missing (a memext mode's run of bench/faas writes it)")
    by_fn = collections.defaultdict(list)
    for c in calls:
        if (a.cls == "all" or c["class"] == a.cls) and (not a.function or c["function"] == a.function):
            by_fn[c["function"]].append(c)
    try:
        bounds = bound_warmth(a.dir) if a.bound else None
    except (OSError, KeyError, TypeError, ValueError) as e:
        raise SystemExit(f"{a.dir}: no trace to bound ({e})")
    tally, by_ordinal = [], collections.defaultdict(list)
    for fn in sorted(by_fn):
        evs = events.get(meta["cgroups"].get(fn), [])
        if not a.summary:
            print(f"{fn} ({by_fn[fn][0]['class']}) {meta['cgroups'].get(fn)}")
        for i, (c, gap) in enumerate(calls_with_gaps(by_fn[fn], evs)):
            lab = label(gap)
            if bounds is not None:
                lab = f"{warmth(c)} ({'warm' if bounds.get((fn, i)) else 'cold'} in bound) {lab}"
            tally.append((lab, c["latency_ms"]))
            by_ordinal[min(i + 1, 6)].append(c["latency_ms"])
            if a.summary:
                continue
            for t, ev, detail in gap:
                print(f"    {t:8.2f}  {ev} {detail}")
            faults = f", {c['majflt']} major faults" if c.get("majflt") else ""
            print(f"  {c['t']:8.2f}  CALL {i + 1}: {c['latency_ms']:.0f} ms{faults}  [{lab}]")
    print(f"calls of class {a.cls} by what the daemon did since the function's previous call:")
    for lab, (n, p50, mx) in summarize(tally).items():
        print(f"  {lab:<42} {n:4d} calls  p50 {p50:8.1f} ms  max {mx:8.1f} ms")
    print("by the call's ordinal (6 = sixth and later):")
    for k in sorted(by_ordinal):
        v = by_ordinal[k]
        print(f"  call {k}: {len(v):4d}  p50 {statistics.median(v):8.1f} ms  max {max(v):8.1f} ms")


if __name__ == "__main__":
    main()
