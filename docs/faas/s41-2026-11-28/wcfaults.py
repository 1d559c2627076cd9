import sys, os, json, csv, collections, gzip
sys.path.insert(0, "/work/main/bench/faas")
import timeline
tot = collections.Counter()
for d in sys.argv[1:]:
    meta = json.load(open(os.path.join(d, "functions-zram-memext-r0.json")))
    rows = list(csv.DictReader(open(os.path.join(d, "calls-zram-memext-r0.csv"))))
    calls = collections.defaultdict(list)
    for r in rows: calls[r["function"]].append(float(r["t"]))
    cg2fn = {v: k for k, v in meta["cgroups"].items()}
    start = meta["trace_start_epoch"]
    log = os.path.join(d, "memext-daemon-zram-r0.log")
    f = open(log) if os.path.exists(log) else gzip.open(log + ".gz", "rt")
    c = collections.Counter()
    for line in f:
        if '"warm-call"' not in line and '"onset"' not in line and '"woke"' not in line: continue
        e = json.loads(line)
        fn = cg2fn.get(e.get("context"))
        if not fn: continue
        t = timeline.epoch(e["timestamp"]) - start
        if t < 0 or t > 175: continue
        true = any(-0.5 <= t - x <= 1.2 for x in calls[fn])
        k = (e["event"], e.get("via"), "call" if true else "no call", "f=0" if e.get("faults", 0) == 0 else "f>0", "held" if e.get("held") else "")
        c[k] += 1; tot[k] += 1
for k, v in sorted(tot.items()): print(v, k)
