#!/usr/bin/env python3
"""TLB shootdowns a second on each CPU during each window of a run, from a
log of /proc/interrupts' TLB line taken every 5 s (`EPOCH TLB: CPU0 CPU1 ...`)
beside it. A window ends at its result line in RUN/run.log and lasts
results.csv's window_s. Usage: tlb_rates.py RUN TLB_LOG"""
import csv
import datetime
import os
import re
import statistics
import sys


def main(run, log):
    rows = [line.split() for line in open(log)]
    samples = [(int(r[0]), [int(x) for x in r[2:] if x.isdigit()]) for r in rows]
    day = datetime.datetime.fromtimestamp(samples[0][0], datetime.timezone.utc).date()
    ends = [m.group(1) for m in (re.match(r"\[(\d\d:\d\d:\d\d)\]     critical", line) for line in open(os.path.join(run, "run.log"))) if m]
    modes = list(csv.DictReader(open(os.path.join(run, "postgres-burst", "results.csv"))))
    for mode, end in zip(modes, ends):
        t1 = datetime.datetime.combine(day, datetime.time.fromisoformat(end), datetime.timezone.utc).timestamp()
        t0 = t1 - float(mode["window_s"])
        rates = []
        for (a, ca), (b, cb) in zip(samples, samples[1:]):
            if t0 <= a and b <= t1:
                rates.extend((y - x) / (b - a) for x, y in zip(ca, cb))
        if rates:
            print(f"{mode['mode']}: {len(rates)} CPU-intervals, TLB shootdowns a second on a CPU: "
                  f"median {statistics.median(rates):.0f}, max {max(rates):.0f}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
