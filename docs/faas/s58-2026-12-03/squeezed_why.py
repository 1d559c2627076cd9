#!/usr/bin/env python3
"""For each call room.py finds lost to a squeeze: the engine's expected time
to the function's next call at the squeeze, bound.py's from every call, when
it came, calls and recorded wakes before it. Usage (from the repository
root, the daemon's log unzipped beside the run): squeezed_why.py RUN_DIR..."""
import sys, os, collections, statistics, json
sys.path.insert(0, 'bench/faas')
import room, timeline
REC=('woke','onset','warm-call','call')
rows=[]
for d in sys.argv[1:]:
    meta, calls, events = timeline.load(d, 'zram', 'memext', 0)
    bounds = timeline.bound_warmth(d)
    with timeline.open_log(d, 'zram', 'memext', 0) as f:
        lines=f.readlines()
    rooms = room.room_events(lines, meta["trace_start_epoch"])
    recs=collections.defaultdict(list)
    for l in lines:
        try: e=json.loads(l)
        except ValueError: continue
        if e.get('event') in REC: recs[e.get('context')].append(timeline.epoch(e['timestamp'])-meta['trace_start_epoch'])
    times = collections.defaultdict(list)
    for c in calls: times[c["function"]].append(c["t"])
    for c, t0 in room.lost_calls(meta, calls, events, bounds):
        hit = room.squeeze_of(rooms, meta["cgroups"][c["function"]], t0, c["t"])
        if not hit: continue
        t, acct, place, s = hit
        before = sorted(x for x in times[c["function"]] if x < t)
        rb = sorted(x for x in recs[meta["cgroups"][c["function"]]] if x < t)
        eng = room.wake_in_s(s)
        if eng is None or not before: continue
        # engine formula on recorded wakes
        if len(rb)>=2: ef=max((t-rb[0])/(len(rb)-1), t-rb[-1])
        elif rb: ef=t-rb[0]+45
        else: ef=None
        rows.append((c['class'], eng, timeline.faas_bound.expected_wake_in(before, t), c['t']-t, len(before), len(rb), t-before[-1], ef))
for r in sorted(rows, key=lambda r: r[1]/max(r[2],0.1))[-25:]:
    print("%-8s eng %6.1f bound %6.1f came %5.1f calls %2d recs %2d since-last %5.1f engformula %s" % (r[0], r[1], r[2], r[3], r[4], r[5], r[6], None if r[7] is None else round(r[7],1)))
print(len(rows), 'ratio eng/bound median', statistics.median(r[1]/max(r[2],0.1) for r in rows))
print('eng vs engformula (recorded wakes): median', statistics.median(r[1]-r[7] for r in rows if r[7] is not None))
import collections
g=collections.Counter()
for r in rows:
    gap=r[6]+r[3]
    g[(r[0], '<2s' if gap<2 else '<5s' if gap<5 else '<10s' if gap<10 else '>=10')]+=1
print(sorted(g.items()))
