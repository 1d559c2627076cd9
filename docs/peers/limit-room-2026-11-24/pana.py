"""Per sample: parent usage vs cap, sum of noise limits, critical usage, deltas of parent failcnt and critical majflt."""
import sys, re, json, collections
samples, log = sys.argv[1], sys.argv[2]
crit = None
for l in open(log):
    if '"class":"critical"' in l:
        crit = re.search(r'/memext-peers/([0-9a-f]{12})', l).group(1); break
by = collections.OrderedDict()
for l in open(samples):
    p = l.split()
    if len(p) < 6: continue
    by.setdefault(p[0], {})[p[1]] = [int(x) if x.isdigit() else 0 for x in p[2:6]]
M = 1 << 20
prev = None
rows = []
for t, d in by.items():
    if 'parent' not in d or crit not in d: continue
    pu, pl, pf, _ = d['parent']
    cu, cl, cf, cm = d[crit]
    noise = [v for k, v in d.items() if k not in ('parent', crit)]
    lim = sum(min(v[1], pl) for v in noise)
    nu = sum(v[0] for v in noise)
    if prev:
        rows.append((float(t), pu / M, pl / M, cu / M, lim / M, nu / M, pf - prev[0], cm - prev[1]))
    prev = (pf, cm)
t0 = rows[0][0]
tot_f = sum(r[6] for r in rows); tot_m = sum(r[7] for r in rows)
# majflt in samples where parent failcnt grew vs not
m_hit = sum(r[7] for r in rows if r[6] > 0); n_hit = sum(1 for r in rows if r[6] > 0)
m_over = sum(r[7] for r in rows if r[3] + r[4] > r[2]); n_over = sum(1 for r in rows if r[3] + r[4] > r[2])
print(f"samples {len(rows)}; parent failcnt +{tot_f}; critical majflt +{tot_m}")
print(f"samples with parent failcnt growing: {n_hit} ({100*n_hit/len(rows):.0f}%), critical majflt in them {m_hit} ({100*m_hit/max(tot_m,1):.0f}%)")
print(f"samples with critical usage + noise limits > cap: {n_over} ({100*n_over/len(rows):.0f}%), critical majflt in them {m_over} ({100*m_over/max(tot_m,1):.0f}%)")
if '-v' in sys.argv:
    for r in rows:
        if r[7] > 0 or r[6] > 0:
            print(f"{r[0]-t0:7.2f} parent {r[1]:.0f}/{r[2]:.0f} crit {r[3]:.0f} noise use {r[5]:.0f} lim {r[4]:.0f} failcnt+{r[6]} majflt+{r[7]}")
