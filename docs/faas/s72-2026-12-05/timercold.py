#!/usr/bin/env python3
"""Timer calls from the 4th that came cold: what the daemon did between the previous call and this one."""
import json,gzip,datetime,sys,glob,csv,collections
for run in sys.argv[1:]:
    d=json.load(open(glob.glob(run+'/functions-*.json')[0]))
    t0=d['trace_start_epoch']; byhash={v.split('/')[-1]:k for k,v in d['cgroups'].items()}
    ev=collections.defaultdict(list)
    for line in gzip.open(glob.glob(run+'/memext-daemon-*.log.gz')[0],'rt'):
        j=json.loads(line); c=j.get('context','')
        fn=byhash.get(c.split('/')[-1]) if c else None
        if not fn: continue
        ts=datetime.datetime.fromisoformat(j['timestamp'].replace('Z','+00:00')).timestamp()-t0
        e=j.get('event')
        if e in ('woke','onset','bringing-back','reclaimed','pushed-out','pushing-out','settled','became-idle'):
            tag=e+(':'+j.get('reason','') if e=='bringing-back' else '')+(':'+j.get('via','') if e in('woke','onset') else '')
            ev[fn].append((ts,tag))
    rows=sorted(csv.DictReader(open(glob.glob(run+'/calls-*.csv')[0])),key=lambda r:float(r['t']))
    n=collections.Counter(); prev={}
    print('==',run)
    for r in rows:
        fn=r['function']; t=float(r['t'])
        if r['class']=='timer':
            n[fn]+=1
            if n[fn]>=4 and int(r['majflt'])>200:
                p=prev.get(fn,0)
                seq=[f"{ts:.2f} {tag}" for ts,tag in ev[fn] if p<ts<t+0.01]
                print(f" {fn} call{n[fn]} t={t:.2f} lat={r['latency_ms']} maj={r['majflt']} prev={p:.2f}")
                print('    ', '; '.join(seq))
        prev[fn]=t
