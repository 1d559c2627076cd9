#!/usr/bin/env python3
"""Replays rest rules (rest.rs `RestCpu`, a Python copy) on every resting
reading of bench/faas runs whose daemon logged at trace level
(`MEMEXT_LOG=info,memext::daemon::events=trace`: a `rested` event for each
resting reading, a `warm-call` for each one taken for a call), in order per
function, the resident ones judged.

Per run and rule: the calls after a quiet gap (2 s or more since the
function's previous call) and within a burst that nothing saw (no wake,
onset or call logged near it: wakes.py `MATCH`) and the
rule did not take for a call either, against those it took (`cpu-seen`);
readings with no call it took for one (`false`); and memext's keep order
replayed (bound.py, as `../s65-2026-12-04/keepseen.py`) with the calls the
rule leaves unseen out of the histories and the readings it took for calls
where none came in them.

Usage (from the repository root): replay_rest.py RUN_DIR..."""
import bisect
import collections
import csv
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "bench", "faas"))
sys.path.insert(0, os.path.join(HERE, "..", "s65-2026-12-04"))
import bound  # noqa: E402
import timeline  # noqa: E402
import trace as tr  # noqa: E402
import wakes  # noqa: E402
from keepseen import FLOORS_MIB, daemon_lines, engine_estimate  # noqa: E402

SLACK = 0.05
CALL_CPU = 0.7e-3
MIN_SPAN = 0.25
ALLOWANCE_SPAN = 1.0
FORGET_AFTER = 60.0
WARM_CALL_MAJOR_FAULTS = 16


class Rest:
    """rest.rs `RestCpu`: `learned` s before it judges, the allowance from
    the `nth` busiest second (1: the busiest)."""

    def __init__(self, learned=10.0, nth=1):
        self.cpu = self.span = 0.0
        self.busiest = []
        self.learned, self.nth = learned, nth

    def rate(self):
        return self.cpu / self.span if self.span else 0.0

    def allowance(self, span):
        if self.span < self.learned:
            return None
        peak = self.busiest[-self.nth] if len(self.busiest) >= self.nth else 0.0
        return max(2 * self.rate(), 1.5 * peak) * max(span, ALLOWANCE_SPAN) + CALL_CPU

    def learn(self, used, span):
        if span < MIN_SPAN:
            return
        self.cpu += used
        self.span += span
        if span >= ALLOWANCE_SPAN:
            self.busiest = sorted(self.busiest + [used / span])[-3:]
        if self.span > FORGET_AFTER:
            self.cpu /= 2
            self.span /= 2
            self.busiest = [max(p / 2, self.rate()) for p in self.busiest]


RULES = {
    "10 s, busiest (before b08ac41)": dict(),
    "5 s, busiest": dict(learned=5.0),
    "10 s, second-busiest": dict(nth=2),
    "5 s, second-busiest (b08ac41)": dict(learned=5.0, nth=2),
    "3 s, second-busiest": dict(learned=3.0, nth=2),
    "5 s, third-busiest": dict(learned=5.0, nth=3),
}


def load(d):
    meta = json.load(open(glob.glob(os.path.join(d, "functions-*.json"))[0]))
    start, fn_of = meta["trace_start_epoch"], {cg: fn for fn, cg in meta["cgroups"].items()}
    calls = collections.defaultdict(list)
    for r in csv.DictReader(open(glob.glob(os.path.join(d, "calls-*.csv"))[0])):
        calls[r["function"]].append(float(r["t"]))
    for v in calls.values():
        v.sort()
    end = json.load(open(os.path.join(d, "params.json")))["trace"]["seconds"] - 5.0
    reads, other = collections.defaultdict(list), collections.defaultdict(list)
    for raw in daemon_lines(d):
        if not any(k in raw for k in ('"rested"', '"warm-call"', '"woke"', '"onset"', '"event":"call"')):
            continue
        e = json.loads(raw)
        fn = fn_of.get(e.get("context"))
        if not fn:
            continue
        t = timeline.epoch(e["timestamp"]) - start
        if e["event"] in ("woke", "onset", "call"):
            other[fn].append(t)
        elif e["event"] in ("rested", "warm-call") and "cpu_us" in e:
            if e["event"] == "warm-call" or e.get("resident"):
                reads[fn].append((t, e["cpu_us"] / 1e6, e["span_ms"] / 1e3, e.get("major_faults", 0)))
    return calls, reads, end, other


def replay(run, rule):
    """(counts, unseen call times, [(t, function) taken where none came])."""
    calls, reads, end, other = run
    out, unseen, false = collections.Counter(), set(), []
    for fn, c in calls.items():
        r, took = Rest(**rule), set()
        for t, cpu, span, majors in reads.get(fn, []):
            a = r.allowance(span)
            call = a is not None and majors <= WARM_CALL_MAJOR_FAULTS and cpu > a
            lo, hi = bisect.bisect_left(c, t - span - SLACK), bisect.bisect_right(c, t + SLACK)
            if call and hi > lo:
                took.update(range(lo, hi))
            elif call and 0 <= t <= end:
                out["false"] += 1
                false.append((t, fn))
            if not call and majors == 0:
                r.learn(cpu, span)
        o = other.get(fn, [])
        for i, t in enumerate(c):
            if any(wakes.MATCH[0] <= x - t <= wakes.MATCH[1] for x in o):
                continue
            if i not in took:
                unseen.add(round(t, 3))
            if t <= end:
                kind = "quiet" if not i or t - c[i - 1] >= 2.0 else "burst"
                out[f"{kind} {'cpu-seen' if i in took else 'unseen'}"] += 1
    return out, unseen, false


def kept_warm(d, unseen, false):
    params, heaps, cap = bound.load_run(d)
    trace = tr.generate(params)
    index = {f.name: i for i, f in enumerate(trace.functions)}
    return bound.simulate(trace.calls, [h + bound.BASE_MIB for h in heaps], [f.cls for f in trace.functions],
                          cap - FLOORS_MIB, "memext", 3.0, cap / 32, estimate=engine_estimate,
                          merge=lambda _p, t: round(t, 3) in unseen,
                          extra=[(t, index[fn]) for t, fn in false])["all"]


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    print("| run | rule | quiet gap: unseen / taken by CPU | burst: unseen / taken by CPU | false | keep order: warm |")
    print("|---|---|---|---|---|---|")
    for d in sys.argv[1:]:
        run = load(d)
        for name, rule in RULES.items():
            o, unseen, false = replay(run, rule)
            print(f"| {os.path.basename(d.rstrip('/'))} | {name} | {o['quiet unseen']} / {o['quiet cpu-seen']} "
                  f"| {o['burst unseen']} / {o['burst cpu-seen']} | {o['false']} | {kept_warm(d, unseen, false)} |")


if __name__ == "__main__":
    main()
