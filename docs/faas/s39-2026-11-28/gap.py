#!/usr/bin/env python3
"""Calls warm in bound.py's keep order (transfers free) against calls warm
in a bench/faas memext run (under 100 major faults), per class: bound warm,
memext warm, both, the bound's only, memext's only. Then the calls warm in
the bound but cold in the run, by what the daemon's log last did to the
function's limit before the call (lowered to its floor, or in part).
Usage: gap.py RUN_DIR..."""
import collections, csv, datetime, gzip, json, os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'bench', 'faas'))
import bound  # noqa: E402
import trace as tr  # noqa: E402


def one(run):
    params, heaps, cap = bound.load_run(run)
    t = tr.generate(params)
    sizes = [h + bound.BASE_MIB for h in heaps]
    classes = [f.cls for f in t.functions]
    flags = []
    bound.simulate(t.calls, sizes, classes, cap, 'memext', 3.0, cap / 32, per_call=flags)
    pick = lambda pre: [os.path.join(run, f) for f in os.listdir(run) if f.startswith(pre)][0]
    fj = json.load(open(pick('functions-')))
    t0, byc = fj['trace_start_epoch'], {v: k for k, v in fj['cgroups'].items()}
    rows = list(csv.DictReader(open(pick('calls-'))))
    lf = [os.path.join(run, f) for f in os.listdir(run) if '-daemon-' in f][0]
    lowered = collections.defaultdict(list)
    for line in (gzip.open if lf.endswith('.gz') else open)(lf, 'rt'):
        if not line.startswith('{'):
            continue
        j = json.loads(line)
        if j.get('event') == 'reclaimed' and j.get('context') in byc:
            ts = datetime.datetime.fromisoformat(j['timestamp'].replace('Z', '+00:00')).timestamp() - t0
            lowered[byc[j['context']]].append((ts, j.get('to', 0) / 2**20))
    per = collections.defaultdict(lambda: [0] * 5)
    why = collections.Counter()
    for (ct, f), w, r in zip(t.calls, flags, rows):
        m = int(r['majflt'] or 0) < 100
        x = per[classes[f]]
        x[0] += w; x[1] += m; x[2] += w and m; x[3] += w and not m; x[4] += m and not w
        if w and not m:
            before = [to for ts, to in lowered[r['function']] if ts < ct]
            why['never lowered' if not before else 'to its floor' if before[-1] <= 4.5 else 'in part'] += 1
    print(f"{run}: warm in the bound, cold in the run: {sum(why.values())} {dict(why)}")
    print("| class | bound warm | run warm | both | bound only | run only |")
    print("|---|---|---|---|---|---|")
    for k, v in per.items():
        print(f"| {k} | " + " | ".join(map(str, v)) + " |")


for d in sys.argv[1:]:
    one(d)
