"""Where the functions' CPU went away from their calls: perf samples of each
function's pid more than GAP s from any of its calls, by leaf-most kernel/user
frames; and the same for samples within a call."""
import sys, os, json, csv, collections, subprocess
d, data, pidsf, offf = sys.argv[1:5]
GAP = 1.5
meta = json.load(open(os.path.join(d, "functions-zram-memext-r0.json")))
cid2fn = {v.rsplit("/", 1)[1]: k for k, v in meta["cgroups"].items()}
pid2fn = {}
for line in open(pidsf):
    p = line.split()
    for pid in p[1:]:
        pid2fn[int(pid)] = cid2fn.get(p[0])
calls = collections.defaultdict(list)
for r in csv.DictReader(open(os.path.join(d, "calls-zram-memext-r0.csv"))):
    calls[r["function"]].append(float(r["t"]))
off = float(open(offf).read()) - meta["trace_start_epoch"]  # trace t = mono + off
out = subprocess.run(["perf", "script", "-i", data, "-F", "comm,pid,time,ip,sym"], capture_output=True, text=True).stdout
rest, near = collections.Counter(), collections.Counter()
restn = nearn = 0
restfn = collections.Counter()
for block in out.split("\n\n"):
    lines = block.strip().split("\n")
    if not lines or not lines[0].strip(): continue
    head = lines[0].split()
    try:
        pid = int(head[1]); t = float(head[2].rstrip(":"))
    except (IndexError, ValueError):
        continue
    fn = pid2fn.get(pid)
    if not fn: continue
    tt = t + off
    syms = [l.split(None, 1)[1] if len(l.split(None, 1)) > 1 else "?" for l in lines[1:]]
    key = " <- ".join(s.split("+")[0] for s in syms[:4])
    if any(abs(tt - c) <= GAP for c in calls[fn]) or any(0 <= tt - c <= 3 for c in calls[fn]):
        near[key] += 1; nearn += 1
    else:
        rest[key] += 1; restn += 1; restfn[(fn, int(tt))] += 1
print("samples near calls", nearn, "away from calls", restn)
print("== away from calls")
for k, v in rest.most_common(25): print(v, k)
print("== busiest function-seconds away from calls")
for k, v in restfn.most_common(15): print(v, k)
