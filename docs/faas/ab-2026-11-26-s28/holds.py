#!/usr/bin/env python3
"""Per bench/faas run (an ab.sh run directory RUN with RUN.status beside it):
how the daemon's holds for predicted calls went.

- status samples (`memext status --json` every ~2 s, the trace's 180 s):
  contexts held, and held while idle with over 16 MiB in swap (a function
  held but in fact out: nothing reads it back, see session 28's README);
- the timer calls from each function's 4th on, by what the daemon did in
  the 6 s before the call (held: the wake that saw the call was judged by
  a held poll; +back: a periodic read-back; +lowered: its limit lowered
  with pages reclaimed) and whether the call was slow (over 25 ms with at
  least 50 major faults). Printed as `kind: fast/slow`.

  python3 holds.py RUN_DIR...
  python3 holds.py --extract RUN_DIR...   (writes RUN_DIR/held.csv from
      RUN_DIR.status: the samples' count and every held context's sample;
      the status files, 9 MB a run, are not kept in docs/)
"""
import collections
import csv
import datetime
import glob
import gzip
import json
import os
import sys

OUT_SWAPPED = 16 << 20


def epoch(ts):
    return datetime.datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


def held_samples(run, start):
    """(samples, [(t, function, state, swapped bytes)] of the held ones),
    from RUN.status or, failing that, RUN/held.csv; None without either."""
    try:
        text = open(run.rstrip("/") + ".status").read()
    except OSError:
        try:
            rows = list(csv.reader(open(os.path.join(run, "held.csv"))))
        except OSError:
            return None
        return int(rows[0][1]), [(float(t), f, st, int(sw)) for t, f, st, sw in rows[1:]]
    samples, held = 0, []
    for block in text.split("# ")[1:]:
        stamp, _, body = block.partition("\n")
        if not 0 < float(stamp) - start < 180:
            continue
        try:
            contexts = json.loads(body)
        except ValueError:
            continue
        for c in contexts:
            samples += 1
            if c["held"]:
                held.append((float(stamp) - start, c["name"], c["state"], c["swapped_bytes"]))
    return samples, held


def status_counts(run, start):
    got = held_samples(run, start)
    if got is None:
        return None
    samples, held = got
    out = sum(state == "idle" and swapped > OUT_SWAPPED for _, _, state, swapped in held)
    return samples, len(held), out


def events(run, start, by_cgroup):
    out = collections.defaultdict(list)
    log = glob.glob(run + "/*daemon*.log*")[0]
    with (gzip.open if log.endswith(".gz") else open)(log, "rt") as f:
        for line in f:
            e = json.loads(line)
            fn = by_cgroup.get(e.get("context"))
            if fn:
                out[fn].append((epoch(e["timestamp"]) - start, e))
    return out


def calls_by_kind(run, evs):
    rows = sorted((r for r in csv.DictReader(open(glob.glob(run + "/calls-*.csv")[0]))
                   if r["class"] == "timer" and not r["error"]), key=lambda r: float(r["t"]))
    seen, kinds = collections.Counter(), collections.defaultdict(lambda: [0, 0])
    for r in rows:
        fn, c = r["function"], float(r["t"])
        seen[fn] += 1
        if seen[fn] < 4:
            continue
        slow = float(r["latency_ms"]) > 25 and int(r["majflt"]) >= 50
        before = [e for t, e in evs[fn] if c - 6 <= t < c]
        after = [e for t, e in evs[fn] if c <= t <= c + 1.5 and e.get("event") in ("woke", "onset", "warm-call")]
        kind = "held" if any(e.get("held") for e in after) else "not held"
        if any(e.get("event") == "bringing-back" and e.get("reason") == "periodic" for e in before):
            kind += "+back"
        if any(e.get("event") == "reclaimed" and e.get("ms", 0) > 1 for e in before):
            kind += "+lowered"
        kinds[kind][slow] += 1
    return kinds


def extract(run, start):
    samples, held = held_samples(run, start)
    with open(os.path.join(run, "held.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["samples", samples, "", ""])
        w.writerows(("%.2f" % t, fn, state, swapped) for t, fn, state, swapped in held)


if __name__ == "__main__":
    do_extract = sys.argv[1:2] == ["--extract"]
    for run in sys.argv[1 + do_extract:]:
        run = run.rstrip("/")
        meta = json.load(open(glob.glob(run + "/functions-*.json")[0]))
        start = meta["trace_start_epoch"]
        if do_extract:
            extract(run, start)
            continue
        by_cgroup = {v: k for k, v in meta["cgroups"].items()}
        st = status_counts(run, start)
        kinds = calls_by_kind(run, events(run, start, by_cgroup))
        slow = sum(v[1] for v in kinds.values())
        print("{}: status samples {}, held {}, held while out {}; timer calls from the 4th, slow {}: {}".format(
            os.path.basename(run), *(st or ("-", "-", "-")), slow,
            ", ".join("{} {}/{}".format(k, *v) for k, v in sorted(kinds.items()))))
