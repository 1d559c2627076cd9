"""bench/peers results of several runs: per cell and mode (not ideal), the
critical throughput and p99 against the same run's ideal, the noise's ops
and p50 (ideal's beside), the critical major faults and TLB shootdowns.
Usage: python3 mtab.py RUN_DIR..."""
import csv, glob, os, sys

print("| run | cell | mode | throughput x ideal | p99 x ideal | noise ops (ideal) | noise p50 s (ideal) | critical major faults | TLB shootdowns |")
print("|---|---|---|---|---|---|---|---|---|")
for run in sys.argv[1:]:
    for path in sorted(glob.glob(f"{run}/*/results.csv")):
        rows = list(csv.DictReader(open(path)))
        ideal = next((r for r in rows if r["mode"] == "ideal"), None)
        for r in rows:
            if r["mode"] == "ideal" or ideal is None or not r["throughput"]:
                continue
            mode = "memext" if r["mode"] == "memext" else "variant"
            p50 = f"{float(r['noise_p50']) / 1000:.2f}" if r["noise_p50"] else "-"
            ip50 = f"{float(ideal['noise_p50']) / 1000:.3f}" if ideal["noise_p50"] else "-"
            print(f"| {os.path.basename(run)} | {os.path.basename(os.path.dirname(path))} | {mode} | "
                  f"{float(r['throughput']) / float(ideal['throughput']):.2f}x | {float(r['p99']) / float(ideal['p99']):.2f}x | "
                  f"{r['noise_ops']} ({ideal['noise_ops']}) | {p50} ({ip50}) | {r['crit_majflt']} | {r['tlb_shootdowns']} |")
