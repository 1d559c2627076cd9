"""Calls that came with a wake the daemon logged (`woke` within 1.2 s after
the call began), grouped by how the wake was seen (event, poll, tick) and
whether a bring-back began within 1.5 s of it: calls, latency p50/max, the
handler's major faults p50. Usage: wokecalls.py RUN_DIR..."""
import sys,json,gzip,datetime,glob,csv,collections,statistics as st
def ts(e): return datetime.datetime.fromisoformat(e['timestamp'].replace('Z','+00:00')).timestamp()
for d in sys.argv[1:]:
    log=(glob.glob(d+'/*daemon-*.log.gz')+glob.glob(d+'/*daemon-*.log'))[0]
    ev=[json.loads(l) for l in (gzip.open(log,'rt') if log.endswith('.gz') else open(log)) if l.startswith('{')]
    fj=json.load(open(glob.glob(d+'/functions-*.json')[0])); t0=fj['trace_start_epoch']; cg={v:k for k,v in fj['cgroups'].items()}
    by=collections.defaultdict(list)
    for e in ev:
        if e.get('context') in cg: by[cg[e['context']]].append((ts(e)-t0,e))
    calls=list(csv.DictReader(open(glob.glob(d+'/calls-*.csv')[0])))
    groups=collections.defaultdict(list)
    for c in calls:
        t=float(c['t']); es=by[c['function']]
        w=[(x,e) for x,e in es if e.get('event')=='woke' and -0.05<=x-t<1.2]
        if not w: continue
        x,e=w[0]
        bb=any(ee.get('event')=='bringing-back' and 0<=xx-x<1.5 for xx,ee in es)
        groups[(e.get('via'),bb)].append((float(c['latency_ms']),int(c['majflt'])))
    print(d)
    for k,v in sorted(groups.items()):
        l=sorted(a for a,_ in v); m=sorted(b for _,b in v)
        print('  via=%s bring-back=%s: %d calls, latency p50 %.0f max %.0f, majflt p50 %d'%(k[0],k[1],len(v),l[len(l)//2],l[-1],m[len(m)//2]))
