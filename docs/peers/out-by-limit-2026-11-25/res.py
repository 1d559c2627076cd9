import csv, glob, sys, statistics as st
pat = sys.argv[1] if len(sys.argv) > 1 else 'sc-*-r*'
cols = ['throughput','p99','noise_ops','noise_p50','noise_p99','crit_majflt','cpu_controller_s','cpu_critical_s','cpu_noise_s','swapin_mib','dram_mean_mib']
rows = {}
for d in sorted(glob.glob(pat)):
    for f in glob.glob(d + '/*/results.csv'):
        for r in csv.DictReader(open(f)):
            if r['mode'] != 'memext': continue
            key = d.split('/')[-1]
            rows[key] = r
            print(f"{key:14s} {f.split('/')[-2]:16s}", ' '.join(f"{c[:10]}={r[c]}" for c in cols))
for b in ('new', 'base'):
    rs = [r for k, r in rows.items() if f'-{b}-' in k]
    if not rs: continue
    print(b, len(rs), ' '.join(f"{c[:10]}={st.median(float(r[c] or 0) for r in rs):.2f}" for c in cols))
