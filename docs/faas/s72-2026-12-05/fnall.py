#!/usr/bin/env python3
"""One function's daemon events between two times (room plans that squeezed it, with when its next call was expected).

  python3 fnall.py RUN_DIR fnNNNN FROM TO   (seconds from the trace's start)"""
import json,gzip,datetime,sys,glob
run,fn,lo,hi=sys.argv[1],sys.argv[2],float(sys.argv[3]),float(sys.argv[4])
d=json.load(open(glob.glob(run+'/functions-*.json')[0]))
t0=d['trace_start_epoch']; h=d['cgroups'][fn].split('/')[-1]
for line in gzip.open(glob.glob(run+'/memext-daemon-*.log.gz')[0],'rt'):
    if h not in line: continue
    j=json.loads(line)
    ts=datetime.datetime.fromisoformat(j['timestamp'].replace('Z','+00:00')).timestamp()-t0
    if not lo<ts<hi: continue
    if j.get('event')=='room':
        for x in json.loads(j.get('squeezed','[]')):
            if h in x['key']: print(f"{ts:8.3f} room-squeezed via={j['via']} holds={x['holds']>>20} target={x['target']>>20} whole={x['whole']>>20} exp={x.get('expected_wake_in')}")
    else: print(f"{ts:8.3f}", j.get('event'), j.get('message','')[80:220])
