#!/usr/bin/env python3
"""Each run's N slowest calls: how long after memext last lowered (or rested) the
function they came, and how and when the daemon first saw them.

Usage: slowest.py N RUN_DIR..."""
import json,gzip,datetime,sys,glob,csv,collections
N=int(sys.argv[1])
for d in sys.argv[2:]:
    m=json.load(open(glob.glob(d+'/functions-*.json')[0])); t0=m['trace_start_epoch']; inv={v:k for k,v in m['cgroups'].items()}
    ev=collections.defaultdict(list)
    log=sorted(glob.glob(d+'/*daemon*.log*'))[0]
    for line in (gzip.open(log,'rt') if log.endswith('.gz') else open(log)):
        try: e=json.loads(line)
        except: continue
        fn=inv.get(e.get('context'))
        if not fn: continue
        ts=datetime.datetime.fromisoformat(e['timestamp'].replace('Z','+00:00')).timestamp()-t0
        ev[fn].append((ts,e))
    rows=list(csv.DictReader(open(glob.glob(d+'/calls-*.csv')[0])))
    rows.sort(key=lambda r:-float(r['latency_ms']))
    print('==',d.split('/')[-1])
    for r in rows[:N]:
        fn=r['function']; t=float(r['t'])
        last_low=[(ts,e) for ts,e in ev[fn] if e.get('event') in ('reclaimed','pushing-out','became-idle','rested') and ts<t]
        lw=last_low[-1] if last_low else None
        seen=[(ts,e) for ts,e in ev[fn] if e.get('event') in ('woke','onset','warm-call','call','out-of-memory') and ts>=t-0.6]
        sw=seen[0] if seen else None
        states=[e.get('event') for ts,e in ev[fn] if e.get('event') in ('woke','onset','became-idle','settled') and ts<t]
        print(f"{fn} {r['class']:7} t={t:7.2f} lat={float(r['latency_ms']):6.1f} maj={r['majflt']:>5}  last={lw[1].get('event')+' %.2fs before'%(t-lw[0]) if lw else None}  seen={sw[1].get('event')+'/'+str(sw[1].get('via'))+' %+.3f'%(sw[0]-t) if sw else None} state={states[-1] if states else None}")
