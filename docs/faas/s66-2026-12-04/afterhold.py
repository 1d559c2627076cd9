#!/usr/bin/env python3
"""The warm calls (200 major faults or fewer) of bench/faas runs whose
function's last event before the call was a periodic bring-back (memext
read it back for its predicted call), by whether the handler took a major
fault, against the other calls without one: latency, time to the handler,
handler time and CPU, minor faults (p50 each), and the time from the
bring-back to the call.

Usage (from the repository root): afterhold.py RUN_DIR..."""
import collections
import csv
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "bench", "faas"))
sys.path.insert(0, os.path.join(HERE, "..", "s65-2026-12-04"))
import timeline  # noqa: E402
from keepseen import daemon_lines  # noqa: E402

MOVES = ('"reclaimed"', '"bringing-back"', '"pushing-out"')


def q(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p * len(v)))] if v else float("nan")


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    groups = collections.defaultdict(list)
    for d in sys.argv[1:]:
        meta = json.load(open(glob.glob(os.path.join(d, "functions-*.json"))[0]))
        start, fn_of = meta["trace_start_epoch"], {cg: fn for fn, cg in meta["cgroups"].items()}
        moves = collections.defaultdict(list)
        for raw in daemon_lines(d):
            if any(m in raw for m in MOVES):
                e = json.loads(raw)
                if e.get("context") in fn_of:
                    moves[fn_of[e["context"]]].append((timeline.epoch(e["timestamp"]) - start, e["event"], e.get("reason")))
        for r in csv.DictReader(open(glob.glob(os.path.join(d, "calls-*.csv"))[0])):
            if not r["majflt"] or int(r["majflt"]) > 200:
                continue
            t, majors = float(r["t"]), int(r["majflt"])
            before = [m for m in moves[r["function"]] if m[0] < t - 0.002]
            held = bool(before) and before[-1][1] == "bringing-back" and before[-1][2] == "periodic"
            if held:
                groups["after a periodic bring-back, " + ("no major fault" if not majors else "1-200 major")].append((r, t - before[-1][0]))
            elif not majors:
                groups["other, no major fault"].append((r, 0.0))
    print("| calls | n | latency | to handler | handler | handler CPU | minor faults | since the bring-back |")
    print("|---|---|---|---|---|---|---|---|")
    for k, v in sorted(groups.items()):
        rs = [r for r, _ in v]
        p = lambda c: q([float(r[c]) for r in rs], .5)  # noqa: E731
        since = f"{q([s for _, s in v], .5):.1f} s" if k.startswith("after") else ""
        print(f"| {k} | {len(rs)} | {p('latency_ms'):.2f} ms | {p('to_handler_ms'):.2f} ms | {p('handler_ms'):.2f} ms "
              f"| {p('handler_cpu_ms'):.2f} ms | {p('minflt'):.0f} | {since} |")


if __name__ == "__main__":
    main()
