#!/usr/bin/env python3
"""One row per memext run of the given bench/faas run directories: its
latency, the parent's cap hits, the swap traffic, memext's read-backs for
wakes, and the readings a kernel event fired with no call of that function
in flight (session 43's onsets.py).  runs.py RUN_DIR...  (run from
docs/faas)"""
import csv, os, re, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ONSETS = os.path.join(HERE, "..", "s43-2026-11-28", "onsets.py")
sys.path.insert(0, HERE)
import readbacks  # noqa: E402


def woke_readbacks(log):
    return readbacks.by_reason(log)["woke"][0]


def fired_no_call(run, tier, mode, rnd):
    out = subprocess.run([sys.executable, ONSETS, run, tier, mode, str(rnd)], capture_output=True, text=True).stdout
    m = re.search(r"^fired, no call: (\d+)", out, re.M)
    if m:
        return int(m.group(1))
    return 0 if re.search(r"^fired, in a call:", out, re.M) else None  # onsets.py leaves out a count of 0


def main(runs):
    print("| run | mode | round | p50 ms | p99 ms | cap hits | swap in / out GiB | wake read-backs | fired, no call |")
    print("|---|---|---|---|---|---|---|---|---|")
    for run in runs:
        for r in csv.DictReader(open(os.path.join(run, "results.csv"))):
            if not r["mode"].startswith("memext"):
                continue
            base = os.path.join(run, f"{r['mode']}-daemon-{r['tier']}-r{r['round']}.log")
            log = base if os.path.exists(base) else base + ".gz"
            print(f"| {os.path.basename(run.rstrip('/'))} | {r['mode']} | {int(r['round']) + 1} | {float(r['p50_ms']):.0f} | "
                  f"{float(r['p99_ms']):.0f} | {int(float(r['cap_hits'])):,} | "
                  f"{float(r['swapin_mib']) / 1024:.1f} / {float(r['swapout_mib']) / 1024:.1f} | "
                  f"{woke_readbacks(log)} | {fired_no_call(run, r['tier'], r['mode'], r['round'])} |")


if __name__ == "__main__":
    main(sys.argv[1:])
