#!/usr/bin/env python3
"""The wakes, onsets and warm calls the daemon recorded between calls or at
ticks (via poll or tick), each checked against the run's calls: a call of
that function from 0.15 s before (1.05 s for a tick's reading, which spans a
second) to 0.05 s after makes it real, else it came with no call. Both are
placed against memext's own predicted read-backs of that function (a
periodic, follows-leader or refill bring-back, from its `bringing-back` to
its last `read-back` or `mapped-back` within 2 s): during one (up to 30 ms
after its end), within 1 s after its end, or elsewhere. Records after 179 s
(the functions' teardown) are left out.

  python3 moverwake.py RUN_DIR... [--list]

RUN_DIR: a bench/faas results directory of one memext run (calls csv,
functions json, the daemon's log, plain or gzipped). --list prints each
record near a read-back: where, function, seconds into the trace, what,
via, CPU us, seconds after the read-back's end. Of the no-call records
near a read-back (during or within 1 s after), `early` counts those more
than 3 s before that function's next call: the history takes two records
within 3 s for one wake, so only those stand apart from the call.
"""
import csv
import datetime
import glob
import gzip
import json
import os
import sys

PREDICTED = ("periodic", "follows-leader", "refill")


def epoch(ts):
    return datetime.datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


def events(d, tier):
    log = os.path.join(d, f"memext-daemon-{tier}-r0.log")
    with (gzip.open(log + ".gz", "rt") if os.path.exists(log + ".gz") else open(log)) as f:
        for line in f:
            yield json.loads(line)


def read_backs(evs, fn_of, t0):
    """Per function, the spans of its predicted read-backs, and the records
    (function, t, event, via, cpu us)."""
    spans, records, started = {}, [], {}
    for e in evs:
        ev, fn = e.get("event"), fn_of.get(e.get("context"))
        if fn is None:
            continue
        t = epoch(e["timestamp"]) - t0
        if ev == "bringing-back":
            started[fn] = t if e.get("reason") in PREDICTED else None
        elif ev in ("read-back", "mapped-back") and started.get(fn) is not None and t - started[fn] < 2.0:
            s = spans.setdefault(fn, [])
            if s and s[-1][0] == started[fn]:
                s[-1][1] = t
            else:
                s.append([started[fn], t])
        elif ev in ("woke", "onset", "warm-call") and e.get("via") in ("poll", "tick"):
            records.append((fn, t, ev, e["via"], e.get("cpu_us")))
    return spans, records


def where(spans, t):
    for a, b in spans:
        if a <= t <= b + 0.03:
            return "during", None
        if b < t <= b + 1.0:
            return "after", round(t - b, 2)
    return "elsewhere", None


def tiers(d):
    """The tiers memext ran on in `d`."""
    return sorted(os.path.basename(p).split("-")[1] for p in glob.glob(os.path.join(d, "functions-*-memext-r0.json")))


def run(d, tier):
    f = json.load(open(os.path.join(d, f"functions-{tier}-memext-r0.json")))
    t0, fn_of = f["trace_start_epoch"], {v: k for k, v in f["cgroups"].items()}
    calls = {}
    for r in csv.DictReader(open(os.path.join(d, f"calls-{tier}-memext-r0.csv"))):
        calls.setdefault(r["function"], []).append(float(r["t"]))
    spans, records = read_backs(events(d, tier), fn_of, t0)
    out = {(k, w): [] for k in ("real", "no call") for w in ("during", "after", "elsewhere")}
    early = 0
    for fn, t, ev, via, cpu in records:
        if t > 179.0:
            continue
        back = 1.05 if via == "tick" else 0.15
        kind = "real" if any(t - back <= c <= t + 0.05 for c in calls.get(fn, [])) else "no call"
        w, after = where(spans.get(fn, []), t)
        out[(kind, w)].append((fn, round(t, 2), ev, via, cpu, after))
        later = [c - t for c in calls.get(fn, []) if c > t]
        early += kind == "no call" and w != "elsewhere" and bool(later) and min(later) > 3.0
    return out, early


def main():
    listing = "--list" in sys.argv
    for d, tier in [(a, t) for a in sys.argv[1:] if a != "--list" for t in tiers(a)]:
        out, early = run(d, tier)
        n = {k: len(v) for k, v in out.items()}
        print(f"{d} ({tier}): real {sum(v for (k, _), v in n.items() if k == 'real')} (during a read-back "
              f"{n[('real', 'during')]}, within 1 s after {n[('real', 'after')]}); no call: during "
              f"{n[('no call', 'during')]}, within 1 s after {n[('no call', 'after')]}, elsewhere "
              f"{n[('no call', 'elsewhere')]}; near a read-back and early {early}")
        if listing:
            for (kind, w), recs in out.items():
                if w != "elsewhere":
                    for r in recs:
                        print("   ", kind, w, *r)


if __name__ == "__main__":
    main()
