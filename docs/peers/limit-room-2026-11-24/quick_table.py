"""Per run directory given (glob, default quick-*): memext against ideal in redis-burst/results.csv."""
import csv, glob, sys, os
cols=["throughput","p99","noise_ops","noise_p50","swapin_mib","cpu_controller_s","cpu_critical_s","cpu_noise_s","cpu_client_s","crit_majflt","crit_mem_some_ms","crit_cpu_some_ms"]
print("run      mode   x_ideal p99x " + " ".join(c[:9] for c in cols))
for d in sorted(glob.glob(sys.argv[1] if len(sys.argv) > 1 else "quick-*")):
    f = d + "/redis-burst/results.csv"
    if not os.path.exists(f): continue
    rows = list(csv.DictReader(open(f)))
    ideal = next((r for r in rows if r["mode"] == "ideal"), None)
    for r in rows:
        x = float(r["throughput"]) / float(ideal["throughput"]) if ideal else 0
        px = float(r["p99"]) / float(ideal["p99"]) if ideal else 0
        print(f"{os.path.basename(d):8} {r['mode'][:6]:6} {x:5.2f} {px:5.1f} " + " ".join(f'{float(r[c] or 0):9.1f}' for c in cols))
