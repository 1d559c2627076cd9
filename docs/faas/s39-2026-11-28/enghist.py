#!/usr/bin/env python3
"""bound.py's keep order replayed without its predicted loads (demand only),
two ways: each function's history its true calls, or the wakes the daemon
recorded (`woke`, `onset`, `warm-call` in its log, within 3 s read as one);
and a function called less than H s ago never evicted (memext holds a woken
function ahead of every resting one until it settles and goes quiet, about
2-3 s after its call). Prints the warm calls for H = 0, 1, 1.5, 2.6 s.
Usage: enghist.py RUN_DIR"""
import sys, os, json, datetime, heapq, collections, gzip
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'bench', 'faas'))
import bound, trace as tr
run = sys.argv[1]
params, heaps, cap = bound.load_run(run)
t = tr.generate(params); classes = [f.cls for f in t.functions]
sizes = [h + 12 for h in heaps]
fj = json.load(open([os.path.join(run, f) for f in os.listdir(run) if f.startswith('functions-')][0]))
t0 = fj['trace_start_epoch']; byc = {v: int(k[2:]) for k, v in fj['cgroups'].items()}
lf = [os.path.join(run, f) for f in os.listdir(run) if '-daemon-' in f][0]
op = gzip.open if lf.endswith('.gz') else open
rec = []
for l in op(lf, 'rt'):
    if not l.startswith('{'): continue
    j = json.loads(l)
    if j.get('event') in ('woke', 'onset', 'warm-call') and j.get('context') in byc:
        ts = datetime.datetime.fromisoformat(j['timestamp'].replace('Z', '+00:00')).timestamp() - t0
        rec.append((ts, byc[j['context']]))
rec.sort()
def sim(use_engine, H):
    ev = [(tt, 1, f) for tt, f in t.calls] + ([(tt, 0, f) for tt, f in rec] if use_engine else [])
    ev.sort()
    hist = collections.defaultdict(list); last_call = {}
    res, used, warm = set(), 0.0, 0
    for now, kind, f in ev:
        if kind == 0:
            if not hist[f] or now - hist[f][-1] > 3: hist[f].append(now)  # SAME_WAKE_WITHIN
            continue
        if f in res: warm += 1
        else:
            while used + sizes[f] > cap - cap / 32:
                others = [g for g in res if g != f]
                if not others: break
                def cost(g):
                    if now - last_call.get(g, -1e9) < H: return -1.0
                    return bound.expected_wake_in(hist[g], now) * sizes[g] if hist[g] else float('inf')
                v = max(others, key=lambda g: (cost(g), g)); res.discard(v); used -= sizes[v]
            res.add(f); used += sizes[f]
        last_call[f] = now
        if not use_engine: hist[f].append(now)
    return warm
for H in (0, 1.0, 1.5, 2.6):
    print(run, 'hold', H, 'true history', sim(False, H), 'engine history', sim(True, H))
