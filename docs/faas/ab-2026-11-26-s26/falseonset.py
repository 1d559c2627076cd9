"""Per run: periodic bring-backs, and how many were followed by a wake,
onset or warm-call of the same context within 0.5 s that no call of its
function came near (within -0.3..+1.2 s of the record)."""
import csv, datetime, glob, gzip, json, os, sys
for run in sys.argv[1:]:
    meta = json.load(open(glob.glob(run + "/functions-*.json")[0])); start = meta["trace_start_epoch"]
    fn_of = {v: k for k, v in meta["cgroups"].items()}
    calls = {}
    for r in csv.DictReader(open(glob.glob(run + "/calls-*.csv")[0])):
        calls.setdefault(r["function"], []).append(float(r["t"]))
    log = glob.glob(run + "/*daemon*.log*")[0]
    ev = []
    with (gzip.open if log.endswith(".gz") else open)(log, "rt") as f:
        for line in f:
            if '"context"' not in line: continue
            e = json.loads(line)
            if e.get("event") not in ("bringing-back", "woke", "onset", "warm-call"): continue
            fn = fn_of.get(e.get("context"))
            if not fn: continue
            t = datetime.datetime.fromisoformat(e["timestamp"].replace("Z", "+00:00")).timestamp() - start
            ev.append((t, fn, e["event"], e.get("reason")))
    periodic = [(t, fn) for t, fn, k, r in ev if k == "bringing-back" and r == "periodic"]
    false_after = 0
    for t, fn in periodic:
        for t2, fn2, k2, _ in ev:
            if fn2 == fn and k2 in ("woke", "onset", "warm-call") and t <= t2 <= t + 0.5:
                if not any(-1.2 <= c - t2 <= 0.3 for c in calls.get(fn, [])):
                    false_after += 1
                break
    nocall = sum(1 for t, fn, k, _ in ev if k in ("woke", "onset", "warm-call")
                 and not any(-1.2 <= c - t <= 0.3 for c in calls.get(fn, [])))
    print(f"{os.path.basename(run)}: periodic bring-backs {len(periodic)}, followed within 0.5 s by a recorded wake with no call {false_after}; recorded wakes with no call {nocall}")
