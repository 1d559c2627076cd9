#!/usr/bin/env python3
"""Recorded wakes of timer functions more than 3 s from any call (after or before), by event, via and held."""
import json,gzip,datetime,sys,glob,csv,collections
for grp in sys.argv[1].split(';'):
    c=collections.Counter()
    for run in grp.split(','):
        d=json.load(open(glob.glob(run+'/functions-*.json')[0])); logf=glob.glob(run+'/memext-daemon-*.log*')[0]
        t0=d['trace_start_epoch']; byhash={v.split('/')[-1]:k for k,v in d['cgroups'].items()}
        calls=collections.defaultdict(list); cls={}
        for r in csv.DictReader(open(glob.glob(run+'/calls-*.csv')[0])):
            calls[r['function']].append(float(r['t'])); cls[r['function']]=r['class']
        op=gzip.open if logf.endswith('.gz') else open
        for line in op(logf,'rt'):
            j=json.loads(line)
            if j.get('event') not in ('woke','onset','warm-call','call'): continue
            fn=byhash.get(j.get('context','').split('/')[-1])
            if cls.get(fn)!='timer': continue
            ts=datetime.datetime.fromisoformat(j['timestamp'].replace('Z','+00:00')).timestamp()-t0
            if ts<0: continue
            prev=max([x for x in calls[fn] if x<=ts+0.05],default=-99)
            nxt=min([x for x in calls[fn] if x>ts+0.05],default=1e9)
            if ts-prev>3 and nxt-ts>0.5:
                c[(j['event'],j.get('via'),j.get('held'))]+=1
    print(grp[:40], sum(c.values()), sorted(c.items(),key=lambda x:-x[1]))
