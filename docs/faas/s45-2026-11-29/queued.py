#!/usr/bin/env python3
"""Per call: was its function's bulk read-back in flight when the call came,
and did the handler start only after that read-back ended?
  queued.py RUN_DIR TIER MODE ROUND"""
import csv, gzip, json, os, sys, statistics as st
from datetime import datetime
d, tier, mode, rnd = sys.argv[1:5]
meta = json.load(open(os.path.join(d, f"functions-{tier}-{mode}-r{rnd}.json")))
t0 = meta["trace_start_epoch"]
fn_of = {cg: fn for fn, cg in meta["cgroups"].items()}
reads = {}
with gzip.open(os.path.join(d, f"{mode}-daemon-{tier}-r{rnd}.log.gz"), "rt") as f:
    for l in f:
        if '"read-back"' not in l: continue
        j = json.loads(l)
        end = datetime.fromisoformat(j["timestamp"].replace("Z", "+00:00")).timestamp() - t0
        reads.setdefault(fn_of.get(j["context"]), []).append((end - j["seconds"], end, j["bytes"]))
rows = list(csv.DictReader(open(os.path.join(d, f"calls-{tier}-{mode}-r{rnd}.csv"))))
groups = {}
for r in rows:
    if r["error"]: continue
    t = float(r["t"]) + float(r["late_ms"]) / 1000
    lat, toh = float(r["latency_ms"]), float(r["to_handler_ms"] or 0)
    hit = [(s, e, b) for s, e, b in reads.get(r["function"], []) if s - 0.05 <= t + toh / 1000 and e >= t]
    if not hit:
        k = "no read-back of its function overlapping the call"
        groups.setdefault(k, []).append((lat, toh, None, None))
        continue
    s, e, b = hit[0]
    k = ("read-back began before the call" if s <= t else "read-back began during the call")
    k += ", handler began after it ended" if t + toh / 1000 >= e - 0.002 else ", handler began before it ended"
    groups.setdefault(k, []).append((lat, toh, (e - t) * 1000, (e - s) * 1000))
for k, v in sorted(groups.items()):
    lat = st.median(x[0] for x in v); toh = st.median(x[1] for x in v)
    rest = [x for x in v if x[2] is not None]
    extra = f" read-back end from the call p50 {st.median(x[2] for x in rest):.0f} ms, read-back length p50 {st.median(x[3] for x in rest):.0f} ms" if rest else ""
    print(f"{len(v):4d}  {k}: latency p50 {lat:.0f} ms, to handler p50 {toh:.1f} ms{extra}")
