#!/usr/bin/env python3
"""Where a bench/faas run's cold calls waited, from its calls CSV and the
memext daemon's JSON log (MEMEXT_LOG=info,memext::daemon::events=debug):

- *wakes' queue wait*: for each woken context's read-back, the time from
  the daemon's `bringing-back` (reason woke) to the read-back's start (its
  `read-back` event's time less its seconds), by what ended in the mover
  meanwhile: another wake's read-back, another move with an end event (a
  predicted read-back, a map-back), or none logged (a push-out: it has no
  end event). Counts over 10 ms and the summed wait.
- *cold calls* (over 200 major faults): slow ones (over SLOW ms, 1.5x this
  boot's cold-limit p99 of ~64 ms) against the rest, medians and p90 of:
  the latency, when the wake was seen and queued, when its read-back began
  and ended (ms after the call), the MiB read back.
- *overlap*: cold calls alone against those that overlapped another cold
  call (the first of the pair and the second), and how many of the slow ones
  overlapped one.

Usage: coldwait.py RUN_DIR [RUN_DIR ...]   (tier zram, mode memext, round 0)"""
import collections
import csv
import glob
import gzip
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "bench", "faas"))
from timeline import epoch, json_lines  # noqa: E402

SLOW = 96.0
COLD_MAJFLT = 200


def one(d, pattern):
    """The one file of run directory `d` that `pattern` names (a memext
    variant's mode is part of its files' names)."""
    found = glob.glob(os.path.join(d, pattern))
    if len(found) != 1:
        raise SystemExit(f"{d}: {len(found)} files match {pattern}")
    return found[0]


def log_lines(d):
    p = one(d, "memext*-daemon-zram-r0.log*")
    return gzip.open(p, "rt") if p.endswith(".gz") else open(p)


def load(d):
    fj = json.load(open(one(d, "functions-zram-memext*-r0.json")))
    start, by_cg = fj["trace_start_epoch"], {v: k for k, v in fj["cgroups"].items()}
    events = [(epoch(e["timestamp"]) - start, e) for e in json_lines(log_lines(d))
              if "timestamp" in e and e.get("event") in ("bringing-back", "read-back", "mapped-back", "woke", "onset")]
    calls = [x for x in csv.DictReader(open(one(d, "calls-zram-memext*-r0.csv"))) if x["majflt"]]
    return calls, events, by_cg


def queue_waits(events):
    pending, ends, out = {}, [], collections.defaultdict(list)
    for t, e in events:
        c, k = e.get("context"), e["event"]
        if k == "bringing-back" and e.get("reason") == "woke":
            pending[c] = t
        elif k == "read-back":
            if c in pending:
                q, began = pending.pop(c), t - e.get("seconds", 0)
                ended = [kind for te, kind in ends if q <= te <= began + 0.001]
                what = "another wake" if "wake" in ended else ("another move" if ended else "none logged")
                out[what].append((began - q) * 1e3)
                ends.append((t, "wake"))
            else:
                ends.append((t, "predicted"))
        elif k == "mapped-back":
            ends.append((t, "map"))
    return out


def phases(calls, events, by_cg):
    per = collections.defaultdict(list)
    for t, e in events:
        if e.get("context") in by_cg:
            per[by_cg[e["context"]]].append((t, e))
    out = []
    for x in calls:
        if int(x["majflt"]) <= COLD_MAJFLT:
            continue
        t, lat = float(x["t"]), float(x["latency_ms"])
        es = [(te, e) for te, e in per[x["function"]] if t - 0.02 <= te <= t + lat / 1e3 + 0.2]
        seen = next((te for te, e in es if e["event"] in ("woke", "onset")), None)
        queued = next((te for te, e in es if e["event"] == "bringing-back" and e.get("reason") == "woke"), None)
        rb = next(((te, e) for te, e in es if e["event"] == "read-back" and queued is not None and te >= queued), None)
        ms = lambda v: None if v is None else (v - t) * 1e3  # noqa: E731
        out.append({"lat": lat, "seen": ms(seen), "queued": ms(queued),
                    "rb_start": ms(rb[0] - rb[1].get("seconds", 0)) if rb else None,
                    "rb_end": ms(rb[0]) if rb else None,
                    "rb_mib": rb[1].get("bytes", 0) / 2**20 if rb else None, "t": t})
    return out


def q(rows, k):
    v = sorted(r[k] for r in rows if r[k] is not None)
    return f"{statistics.median(v):.0f} / {v[int(0.9 * len(v))]:.0f}" if v else "-"


def main():
    print("| run | wakes waiting over 10 ms: behind another wake / another move / none logged | summed wait s | "
          "slow cold calls | their latency, seen, read-back start, end (p50 / p90 ms) | the rest's | "
          "cold alone p50 | overlapped: first / second p50 | slow that overlapped |")
    print("|---|---|---|---|---|---|---|---|---|")
    for d in sys.argv[1:]:
        calls, events, by_cg = load(d)
        w = queue_waits(events)
        over = " / ".join(str(sum(x > 10 for x in w[k])) for k in ("another wake", "another move", "none logged"))
        summed = sum(sum(v) for v in w.values()) / 1e3
        ph = phases(calls, events, by_cg)
        slow, rest = [r for r in ph if r["lat"] > SLOW], [r for r in ph if r["lat"] <= SLOW]
        desc = lambda rows: ", ".join(q(rows, k) for k in ("lat", "seen", "rb_start", "rb_end"))  # noqa: E731
        spans = [(r["t"], r["t"] + r["lat"] / 1e3, r) for r in ph]
        alone, first, second, slow_ovl = [], [], [], 0
        for a, b, r in spans:
            others = [(a2, b2) for a2, b2, r2 in spans if r2 is not r and a2 < b and a < b2]
            if not others:
                alone.append(r["lat"])
            elif any(a2 < a for a2, _ in others):
                second.append(r["lat"])
            else:
                first.append(r["lat"])
            slow_ovl += bool(others) and r["lat"] > SLOW
        med = lambda v: f"{statistics.median(v):.0f}" if v else "-"  # noqa: E731
        print(f"| {os.path.basename(d.rstrip('/'))} | {over} | {summed:.1f} | {len(slow)} of {len(ph)} | {desc(slow)} | "
              f"{desc(rest)} | {med(alone)} | {med(first)} / {med(second)} | {slow_ovl} |")


if __name__ == "__main__":
    main()
