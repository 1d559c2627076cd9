#!/usr/bin/env python3
"""Rows of session 30's A/B runs: each memext mode against its own round's
ideal, per burst cell; from the daemon's log the wakes frozen for room and
the bytes read back per mode (the log holds one daemon run per memext mode,
in the order the modes ran)."""
import csv, gzip, json, os, sys


def daemon_runs(path):
    """The daemon's log split into its runs, each [(event, fields)]."""
    runs = []
    if os.path.exists(path + ".gz"):
        f = gzip.open(path + ".gz", "rt")
    elif os.path.exists(path):
        f = open(path)
    else:
        return runs
    for line in f:
        if not line.startswith("{"):
            continue
        e = json.loads(line)
        if e.get("message", "").startswith("memext daemon:"):
            runs.append([])
        if runs:
            runs[-1].append(e)
    return runs


def order(run_dir):
    """(cell, mode) in the order they ran, from the run's log."""
    out = []
    log = run_dir + ".log"
    for line in open(log):
        if "] [" in line and " round " in line:
            what = line.split("] [", 1)[1].split("] ", 1)[1]
            cell, mode = what.split(", ")[:2]
            out.append((cell.replace(" x ", "-"), mode))
    return out


def main(runs):
    for run in runs:
        ran = [cm for cm in order(run) if cm[1].startswith("memext")]
        logs = daemon_runs(os.path.join(run, "memext-daemon.log"))
        stats = {}
        for (cell, mode), events in zip(ran, logs):
            frozen = sum(1 for e in events if e.get("event") == "frozen" and e.get("frozen", True))
            back = sum(e.get("bytes", 0) for e in events if e.get("event") == "read-back")
            stats[(cell, mode)] = (frozen, back / 2**20)
        for cell in ("redis-burst", "postgres-burst"):
            f = os.path.join(run, cell, "results.csv")
            if not os.path.exists(f):
                continue
            rows = list(csv.DictReader(open(f)))
            ideal = next(r for r in rows if r["mode"] == "ideal")
            for r in rows:
                if r["mode"] == "ideal":
                    continue
                fz, back = stats.get((cell, r["mode"]), ("?", 0))
                tp = float(r["throughput"]) / float(ideal["throughput"])
                p99 = float(r["p99"]) / float(ideal["p99"])
                print(f"| {run} | {cell} | {r['mode'].replace('memext+', '+')} | "
                      f"{tp:.2f}x / {p99:.2f}x | {r['noise_ops']} ({ideal['noise_ops']}), "
                      f"{float(r['noise_p50'] or 'nan') / 1000:.1f} s | "
                      f"{float(r['swapin_mib']):.0f} / {float(r['swapout_mib']):.0f} | {back:.0f} | {fz} | "
                      f"{r['cpu_controller_s']}, {r['cpu_noise_s']} | {int(r['tlb_shootdowns']) / 1000:.0f}k | "
                      f"{r['crit_mem_some_ms']} |")


if __name__ == "__main__":
    print("| run | cell | mode | critical throughput / p99 x ideal | noise wakes (ideal's), p50 | swap in / out MiB | read back MiB | wakes frozen | CPU s: controller, noise | TLB shootdowns | critical memory stall ms |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    main(sys.argv[1:])
