"""Per noise wake: container, latency, and what the daemon did for it (events within the wake)."""
import sys, json, datetime, collections
d, samples = sys.argv[1], sys.argv[2]
names = {}
for l in open(samples):
    if l.startswith('# map'):
        p = l.split(); names[p[3]] = p[2]
ev = collections.defaultdict(list)
for l in open(f'{d}/memext-daemon.log'):
    j = json.loads(l); m = j['message']
    t = datetime.datetime.fromisoformat(j['timestamp'].replace('Z', '+00:00')).timestamp()
    if 'memext-peers/' in m:
        cid = m.split('memext-peers/')[1][:12]
        ev[cid].append((t, m.split(': ', 1)[-1]))
rows = []
for l in open(f'{d}/postgres-burst/noise-memext-r0.log'):
    n, j = l.split(' ', 1); j = json.loads(j)
    if j['op'] != 'wake': continue
    t0, t1 = j['t'] - j['lat'], j['t']
    cid = names.get(n, '?')
    es = [f"{t - t0:+.2f} {m[:60]}" for t, m in ev.get(cid, []) if t0 - 3 <= t <= t1 and 'took' not in m]
    rows.append((j['lat'], n, t0, es))
base = min(r[2] for r in rows)
for lat, n, t0, es in sorted(rows, key=lambda r: r[2]):
    print(f"{t0 - base:6.1f} {n} lat {lat:6.2f}  | " + ' ; '.join(es))
