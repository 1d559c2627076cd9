"""Per run: the noise's wakes, when memext saw each (its first woke/onset
event for that container after the touch began), and the touch's latency.
Usage: wakestat.py RUN_DIR... (each with RUN_DIR.samples beside it, whose
'# map ID NAME' lines name the containers)."""
import sys, json, datetime, collections, statistics as st

def load(d):
    names = {}
    for l in open(d + '.samples'):
        if l.startswith('# map'):
            p = l.split(); names[p[3]] = p[2]
    ev = collections.defaultdict(list)
    for l in open(f'{d}/memext-daemon.log'):
        j = json.loads(l); m = j['message']
        if 'memext-peers/' not in m: continue
        t = datetime.datetime.fromisoformat(j['timestamp'].replace('Z', '+00:00')).timestamp()
        ev[m.split('memext-peers/')[1][:12]].append((t, m.split(': ', 1)[-1]))
    rows = []
    for l in open(f'{d}/postgres-burst/noise-memext-r0.log'):
        n, j = l.split(' ', 1); j = json.loads(j)
        if j['op'] != 'wake': continue
        t0, t1 = j['t'] - j['lat'], j['t']
        seen = [t - t0 for t, m in ev.get(names.get(n, '?'), [])
                if t0 - 0.05 <= t <= t1 and (m.startswith('woke') or m.startswith('onset'))]
        back = [t - t0 for t, m in ev.get(names.get(n, '?'), [])
                if t0 - 0.05 <= t <= t1 and m.startswith('read back')]
        rows.append((j['lat'], seen[0] if seen else None, back[0] if back else None))
    return names, rows

for d in sys.argv[1:]:
    names, rows = load(d.rstrip('/'))
    if not names:
        print(f"{d}: no container names in {d}.samples"); continue
    lat = [r[0] for r in rows]
    seen = [r[1] for r in rows if r[1] is not None]
    back = [r[2] for r in rows if r[2] is not None]
    print(f"{d:12s} wakes {len(rows):2d}  touch p50 {st.median(lat):5.2f} s  max {max(lat):5.1f}  "
          f"seen {len(seen):2d} (p50 {st.median(seen) if seen else float('nan'):4.2f} s after it began)  "
          f"read back {len(back):2d}  over 5 s: {sum(l > 5 for l in lat)}")
