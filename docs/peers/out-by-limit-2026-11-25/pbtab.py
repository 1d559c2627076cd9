import csv, glob, os, statistics as st, collections
rows = collections.defaultdict(list)
for f in sorted(glob.glob('pb-*/postgres-burst/results.csv') + glob.glob('m-*/postgres-burst/results.csv')):
    run = f.split('/')[0]; b = run.split('-')[1]
    rs = list(csv.DictReader(open(f)))
    i = next(r for r in rs if r['mode'] == 'ideal'); m = next(r for r in rs if r['mode'] == 'memext')
    x = float(m['throughput']) / float(i['throughput']); p = float(m['p99']) / float(i['p99'])
    rows[b].append((x, p, int(m['noise_ops']), float(m['noise_p50'] or 'nan') / 1e3, float(m['cpu_noise_s']), float(m['cpu_controller_s'])))
    print(f"{run:12s} {x:5.2f}x {p:4.1f}x noise ops {m['noise_ops']} p50 {float(m['noise_p50'] or 'nan')/1e3:5.1f} s  cpu noise {m['cpu_noise_s']} ctl {m['cpu_controller_s']}")
for b, v in rows.items():
    print(b, len(v), f"thr {min(r[0] for r in v):.2f}-{max(r[0] for r in v):.2f} (median {st.median(r[0] for r in v):.2f})",
          f"p99 {min(r[1] for r in v):.1f}-{max(r[1] for r in v):.1f} ({st.median(r[1] for r in v):.1f})",
          f"noise ops {sum(r[2] for r in v)} p50 median {st.median(r[3] for r in v if r[3]==r[3]):.1f} s")
