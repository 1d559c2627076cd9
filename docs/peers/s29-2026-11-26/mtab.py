"""bench/peers runs of session 29: per cell and mode (not ideal), the
critical throughput and p99 against the same run's ideal, the noise's ops
and p50 (ideal's beside), the critical major faults, its memory stall, the
noise's CPU and the TLB shootdowns. `variant` is
memext+fast_wakes=true+daemon.reclaim=page-out+daemon.limit_room=false
(with the critical class's keep_anon, the default), `variant-nokeep` the
same with critical.keep_anon=false.
Usage: python3 mtab.py RUN_DIR..."""
import csv, glob, os, sys

V = "memext+fast_wakes=true+daemon.reclaim=page-out+daemon.limit_room=false"


def label(mode):
    return {"memext": "memext", V: "variant", V + "+critical.keep_anon=false": "variant-nokeep"}.get(mode, mode)


print("| run | cell | mode | throughput x ideal | p99 x ideal | noise ops (ideal) | noise p50 s (ideal) "
      "| critical major faults | critical memory stall ms | noise CPU s | TLB shootdowns |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for run in sys.argv[1:]:
    for path in sorted(glob.glob(f"{run}/*/results.csv")):
        rows = list(csv.DictReader(open(path)))
        ideal = next((r for r in rows if r["mode"] == "ideal"), None)
        for r in rows:
            if r["mode"] == "ideal" or ideal is None:
                continue
            if not r["throughput"]:
                print(f"| {os.path.basename(run)} | {os.path.basename(os.path.dirname(path))} | {label(r['mode'])} | failed: {r['failed']} |")
                continue
            p50 = f"{float(r['noise_p50']) / 1000:.2f}" if r["noise_p50"] else "-"
            ip50 = f"{float(ideal['noise_p50']) / 1000:.3f}" if ideal["noise_p50"] else "-"
            print(f"| {os.path.basename(run)} | {os.path.basename(os.path.dirname(path))} | {label(r['mode'])} | "
                  f"{float(r['throughput']) / float(ideal['throughput']):.2f}x | {float(r['p99']) / float(ideal['p99']):.2f}x | "
                  f"{r['noise_ops']} ({ideal['noise_ops']}) | {p50} ({ip50}) | {r['crit_majflt']} | "
                  f"{float(r['crit_mem_some_ms'] or 0):.0f} | {r['cpu_noise_s']} | {r['tlb_shootdowns']} |")
