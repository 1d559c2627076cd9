#!/usr/bin/env python3
"""Recorded wakes of timer functions that came before a call with no call in between, by how early (s) and as a share of the period."""
import json,gzip,datetime,sys,glob,csv,collections
buckets=collections.Counter(); ex=[]
for run in sys.argv[1:]:
    d=json.load(open(glob.glob(run+'/functions-*.json')[0])); logf=glob.glob(run+'/memext-daemon-*.log*')[0]
    t0=d['trace_start_epoch']; byhash={v.split('/')[-1]:k for k,v in d['cgroups'].items()}
    calls=collections.defaultdict(list); cls={}
    for r in csv.DictReader(open(glob.glob(run+'/calls-*.csv')[0])):
        calls[r['function']].append(float(r['t'])); cls[r['function']]=r['class']
    op=gzip.open if logf.endswith('.gz') else open
    for line in op(logf,'rt'):
        j=json.loads(line); c=j.get('context','')
        if j.get('event') not in ('woke','onset','warm-call','call'): continue
        fn=byhash.get(c.split('/')[-1])
        if cls.get(fn)!='timer': continue
        ts=datetime.datetime.fromisoformat(j['timestamp'].replace('Z','+00:00')).timestamp()-t0
        cs=sorted(calls[fn]); 
        if len(cs)<2: continue
        per=sorted(b-a for a,b in zip(cs,cs[1:]))[len(cs)//2-1]
        nxt=[c for c in cs if c>ts]; prv=[c for c in cs if c<=ts]
        if not nxt or not prv: continue
        early=nxt[0]-ts; late=ts-prv[-1]
        if late<3: continue   # a sighting of the previous call
        share=early/per
        b='<1s' if early<1 else '1-3s' if early<3 else ('3s-20%' if share<0.2 else '>20%')
        buckets[b]+=1
        if b=='3s-20%': ex.append((run.split('/')[-1],fn,round(ts,1),round(early,2),round(per,1),j['event'],j.get('via')))
print(buckets)
for e in ex: print(e)
