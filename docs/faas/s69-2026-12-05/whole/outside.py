"""Per bench/faas run directory: the predicted map-backs (those that did not give way), how much of what
each read back lay outside the blocks it asked for (read-back MiB less 2 MiB a block; > 20 MiB counted),
and the calls with at most 16 major and more than 2000 minor faults (timer ones with their latency).
Usage: python3 outside.py RUN_DIR ...  (from the directory holding them)"""
import json,gzip,glob,sys,csv
for run in sys.argv[1:]:
    f=glob.glob(f'{run}/memext-daemon-zram-r0.log*')[0]
    op=gzip.open if f.endswith('gz') else open
    last={};n=0;few=0;gap=0
    for l in op(f,'rt'):
        try: v=json.loads(l)
        except: continue
        ev=v.get('event'); c=v.get('context')
        if ev=='read-back': last[c]=v['bytes']/2**20
        if ev=='mapped-back' and not v.get('gave_way'):
            n+=1; g=max(0,last.get(c,0)-v['blocks']*2); gap+=g; few+= g>20
    rows=list(csv.DictReader(open(f'{run}/calls-zram-memext-r0.csv')))
    m=[r for r in rows if int(r['majflt'])<=16 and int(r['minflt'])>2000]
    tm=[r for r in m if r['class']=='timer']
    print(run,'map-backs',n,'with >20 MiB read back outside the blocks',few,'MiB',int(gap),'| calls <=16 major, >2000 minor:',len(m),'timer',len(tm), 'their ms', sorted(round(float(r['latency_ms'])) for r in tm))
