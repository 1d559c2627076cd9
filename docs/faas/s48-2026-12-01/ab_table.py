#!/usr/bin/env python3
"""The A/B's rows: one per bench/faas run directory given (each one memext
run on zram, as bench/faas/ab.sh leaves them: NAME-rN), with the calls
within 8 ms and the warm ones (under 100 major faults in the handler),
the calls the engine's history recorded (a `woke`, `onset`, `warm-call` or
`call` of the function's context within 1.5 s after the call, as
s47's recorded.py counts them), the `call` events (calls in a busy
stretch, new this session), the lowerings the kernel refused and those
given a step of room back, and the functions that died.

Usage (from the repository root): ab_table.py RUN_DIR..."""
import csv
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "bench", "faas"))
import results  # noqa: E402
import timeline  # noqa: E402

RECORDS = ("woke", "onset", "warm-call", "call")


def row(d, tier="zram", mode="memext", rnd=0):
    meta, calls, events = timeline.load(d, tier, mode, rnd)
    lat = [c["latency_ms"] for c in calls if not c["error"]]
    warm = sum(1 for c in calls if not c["error"] and int(c["majflt"] or 0) < timeline.WARM_MAJFLT)
    recorded = sum(1 for c in calls
                   if any(e in RECORDS and 0 <= t - c["t"] < 1.5 for t, e, _ in events.get(meta["cgroups"][c["function"]], [])))
    busy = sum(1 for evs in events.values() for _, e, _ in evs if e == "call")
    refused = relaxed = 0
    with timeline.open_log(d, tier, mode, rnd) as f:
        for line in f:
            if '"reclaimed"' not in line:
                continue
            e = json.loads(line)
            refused += "cannot write" in e.get("message", "")
            relaxed += bool(e.get("relaxed"))
    with open(os.path.join(d, "results.csv")) as f:
        r = next(csv.DictReader(f))
    return (f"| {os.path.basename(d.rstrip('/'))} | {results.nearest_rank(lat, 0.5):.0f} ms | "
            f"{results.nearest_rank(lat, 0.99):.0f} ms | {sum(1 for x in lat if x <= 8)} | {warm} | "
            f"{float(r['timer_predictable_p99_ms']):.0f} ms | {r['unused_while_waiting_mib']} MiB | {recorded} | {busy} | "
            f"{refused} ({relaxed}) | {r.get('deaths') or 0} |")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    print("| run | p50 | p99 | within 8 ms | warm | timer from call 4 p99 | unused while calls waited "
          "| calls recorded | `call` events | lowerings refused (relaxed) | died |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for d in sys.argv[1:]:
        print(row(d))


if __name__ == "__main__":
    main()
