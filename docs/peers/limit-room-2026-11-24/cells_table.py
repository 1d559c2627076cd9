"""Per run directory matching the glob given (e.g. "matrix-*"): memext against ideal in every cell."""
import csv, glob, sys, os
cols=["throughput","p99","noise_ops","noise_p50","swapin_mib","cpu_controller_s","cpu_critical_s","cpu_noise_s","crit_majflt","crit_mem_some_ms"]
print("run          cell             x_ideal p99x " + " ".join(c[:9] for c in cols))
for d in sorted(x for x in glob.glob(sys.argv[1]) if os.path.isdir(x)):
    for cell in sorted(os.listdir(d)):
        f = os.path.join(d, cell, "results.csv")
        if not os.path.exists(f): continue
        rows = list(csv.DictReader(open(f)))
        ideal = next((r for r in rows if r["mode"] == "ideal"), None)
        for r in rows:
            if r["mode"] == "ideal": continue
            x = float(r["throughput"]) / float(ideal["throughput"]) if ideal else 0
            px = float(r["p99"]) / float(ideal["p99"]) if ideal else 0
            print(f"{os.path.basename(d):12} {cell:16} {x:5.2f} {px:5.1f} " + " ".join(f'{float(r[c] or 0):9.1f}' for c in cols))
