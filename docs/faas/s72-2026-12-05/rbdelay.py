#!/usr/bin/env python3
"""Periodic bring-backs: from the command to its first read-back's end, and calls that came before it ended."""
import json,gzip,datetime,sys,glob,csv,collections,statistics
delays=[]; late=[]
for run in sys.argv[1:]:
    d=json.load(open(glob.glob(run+'/functions-*.json')[0])); logf=glob.glob(run+'/memext-daemon-*.log*')[0]
    t0=d['trace_start_epoch']; byhash={v.split('/')[-1]:k for k,v in d['cgroups'].items()}
    calls=collections.defaultdict(list)
    for r in csv.DictReader(open(glob.glob(run+'/calls-*.csv')[0])): calls[r['function']].append((float(r['t']),r))
    ev=collections.defaultdict(list)
    op=gzip.open if logf.endswith('.gz') else open
    for line in op(logf,'rt'):
        j=json.loads(line); fn=byhash.get(j.get('context','').split('/')[-1])
        if not fn: continue
        ts=datetime.datetime.fromisoformat(j['timestamp'].replace('Z','+00:00')).timestamp()-t0
        e=j.get('event')
        if e=='bringing-back': ev[fn].append((ts,'bb',j.get('reason')))
        elif e=='read-back': ev[fn].append((ts-j.get('seconds',0),'rb',ts))
    for fn,es in ev.items():
        for i,(ts,k,x) in enumerate(es):
            if k=='bb' and x=='periodic':
                rb=next((e for e in es[i+1:] if e[1]=='rb'),None)
                if not rb: continue
                start,end=rb[0],rb[2]
                delays.append(start-ts)
                nxt=[c for c in calls[fn] if c[0]>ts]
                if nxt and nxt[0][0]<end and nxt[0][0]-ts<10:
                    late.append((run.split('s71-2026-12-05/')[-1],fn,round(ts,2),round(start-ts,2),round(end-ts,2),round(nxt[0][0]-ts,2),nxt[0][1]['majflt'],nxt[0][1]['latency_ms']))
print('bring-back to read-back start: quantiles',[round(x,3) for x in statistics.quantiles(delays,n=20)], 'max',round(max(delays),2),'n',len(delays))
print('calls before the read-back ended:',len(late))
for l in late: print(l)
