#!/usr/bin/env python3
"""Timer calls from the 4th, by what the daemon did before them (periodic bring-back, its read-back's end, squeezes after it)."""
import json,gzip,datetime,sys,glob,csv,collections
tot=collections.Counter(); leads=[]; lates=[]
for run in sys.argv[1:]:
    try:
        d=json.load(open(glob.glob(run+'/functions-*.json')[0]))
        logf=glob.glob(run+'/memext-daemon-*.log*')[0]
    except IndexError: continue
    t0=d['trace_start_epoch']; byhash={v.split('/')[-1]:k for k,v in d['cgroups'].items()}
    ev=collections.defaultdict(list)
    op=gzip.open if logf.endswith('.gz') else open
    for line in op(logf,'rt'):
        j=json.loads(line); c=j.get('context','')
        fn=byhash.get(c.split('/')[-1]) if c else None
        if not fn: continue
        ts=datetime.datetime.fromisoformat(j['timestamp'].replace('Z','+00:00')).timestamp()-t0
        e=j.get('event')
        if e=='bringing-back': ev[fn].append((ts,'bb:'+j.get('reason','')))
        elif e in ('read-back','mapped-back','reclaimed','pushing-out','woke','onset'): ev[fn].append((ts,e))
    rows=sorted(csv.DictReader(open(glob.glob(run+'/calls-*.csv')[0])),key=lambda r:float(r['t']))
    n=collections.Counter(); prev={}; c=collections.Counter()
    for r in rows:
        fn=r['function']; t=float(r['t'])
        if r['class']=='timer':
            n[fn]+=1
            if n[fn]>=4:
                p=prev.get(fn,-1e9)
                seq=[(ts,tag) for ts,tag in ev[fn] if p+0.5<ts<t]
                bb=[ts for ts,tag in seq if tag=='bb:periodic']
                cold=int(r['majflt'])>200; slow=float(r['latency_ms'])>16
                if not bb: k='unpredicted'
                else:
                    b=bb[-1]; leads.append(t-b)
                    rb=[ts for ts,tag in seq if ts>b and tag in('read-back','mapped-back')]
                    sq=[ts for ts,tag in seq if ts>b and tag in('reclaimed','pushing-out')]
                    wk=[ts for ts,tag in seq if ts>b and tag in('woke','onset')]
                    k='predicted'+('+squeezed' if sq else '')+('+wake' if wk else '')
                    if rb: lates.append(t-rb[-1])
                c[(k,'cold' if cold else 'warm', 'slow' if slow else 'fast')]+=1
        prev[fn]=t
    tot.update(c)
for k,v in sorted(tot.items()): print(v,k)
import statistics
if leads: print('lead call-bringback: quantiles', [round(x,2) for x in statistics.quantiles(leads,n=10)], 'min',round(min(leads),2))
