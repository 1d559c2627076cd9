import csv,sys,os
# one line per mode of each run: x ideal of its own round, and the critical's faults
for run in sys.argv[1:]:
    rows=list(csv.DictReader(open(os.path.join(run,'postgres-burst','results.csv'))))
    ideal={r['round']:r for r in rows if r['mode']=='ideal'}
    for r in rows:
        if r['mode']=='ideal': continue
        i=ideal[r['round']]
        m=r['mode'].replace('memext+fast_wakes=true+daemon.reclaim=page-out+daemon.limit_room=false','variant')
        print(f"{os.path.basename(run):8} {m:8} {float(r['throughput'])/float(i['throughput']):.2f}x {float(r['p99'])/float(i['p99']):.2f}x  noise ops {r['noise_ops']} p50 {float(r['noise_p50'])/1000:.2f}s p99 {float(r['noise_p99'])/1000:.1f}s  majflt {r['crit_majflt']} ref a/f {r['crit_refault_anon']}/{r['crit_refault_file']} memsome {r['crit_mem_some_ms']}ms  noiseCPU {r['cpu_noise_s']} ctl {r['cpu_controller_s']} tlb {r['tlb_shootdowns']} swapin {r['swapin_mib']}")
