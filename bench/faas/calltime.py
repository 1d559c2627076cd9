#!/usr/bin/env python3
"""Where the time of a bench/faas run's calls went, from its calls-*.csv.

Each answered call is put in one group: cold (its handler took COLD_MAJFLT
major faults or more: its heap came from the tier), warm within the p50
target's 8 ms, or warm and slower for one of three reasons: its handler
mapped pages from the swap cache (MAPPED_MINFLT minor faults or more: read
back ahead of it but not mapped), its handler ran long without faults
(on its CPU, or, where the function reports its wait on a run queue,
waiting half of it or more for a CPU), or the time went before the handler
(the invoker late, the socket's queue, the server's own faults). Per
group: the latency, how late the invoker sent the call, the time from then
to the handler (and the server's wait for a CPU in it), the handler's,
its CPU time and its wait for a CPU, and the major faults the server took
before the handler.

  python3 bench/faas/calltime.py RUN_DIR/calls-zram-memext-r0.csv [...]

Calls written before these columns existed have no split (shown as -).
"""
import csv
import statistics
import sys

COLD_MAJFLT = 50
WITHIN_MS = 8.0
MAPPED_MINFLT = 3000

GROUPS = ("cold", "warm within 8 ms", "warm, mapped in the handler", "warm, long handler without faults",
          "warm, handler waiting for a CPU", "warm, time before the handler")


def group(row):
    """The group of one answered call (a dict of calls-*.csv)."""
    if int(row["majflt"]) >= COLD_MAJFLT:
        return "cold"
    if float(row["latency_ms"]) <= WITHIN_MS:
        return "warm within 8 ms"
    if int(row["minflt"] or 0) >= MAPPED_MINFLT:
        return "warm, mapped in the handler"
    if float(row["handler_ms"]) > WITHIN_MS:
        wait = row.get("handler_wait_ms")
        if wait not in (None, "") and 2 * float(wait) >= float(row["handler_ms"]):
            return "warm, handler waiting for a CPU"
        return "warm, long handler without faults"
    return "warm, time before the handler"


def split(rows):
    """{group: its figures} over the answered calls of `rows`."""
    by = {}
    for r in rows:
        if not r["error"]:
            by.setdefault(group(r), []).append(r)

    def med(rs, k):
        v = [float(r[k]) for r in rs if r.get(k) not in (None, "")]
        return statistics.median(v) if v else None

    def top(rs, k):
        v = [float(r[k]) for r in rs if r.get(k) not in (None, "")]
        return max(v) if v else None

    out = {}
    for g in GROUPS:
        rs = by.get(g, [])
        pre = [int(r["pre_majflt"]) for r in rs if r.get("pre_majflt") not in (None, "")]
        out[g] = {"calls": len(rs), "latency_p50": med(rs, "latency_ms"), "late_p50": med(rs, "late_ms"),
                  "late_max": top(rs, "late_ms"), "to_handler_p50": med(rs, "to_handler_ms"),
                  "to_handler_max": top(rs, "to_handler_ms"), "handler_p50": med(rs, "handler_ms"),
                  "cpu_p50": med(rs, "handler_cpu_ms"), "wait_p50": med(rs, "handler_wait_ms"),
                  "pre_wait_p50": med(rs, "pre_wait_ms"),
                  "pre_majflt_per_call": sum(pre) / len(pre) if pre else None}
    return out


def fmt(v, width, digits=1):
    return f"{'-':>{width}}" if v is None else f"{v:{width}.{digits}f}"


def main(argv=None):
    paths = (argv if argv is not None else sys.argv[1:])
    if not paths or paths[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if paths else 2
    for path in paths:
        with open(path) as f:
            rows = list(csv.DictReader(f))
        print(f"{path}: {len(rows)} calls")
        print(f"  {'':36} {'calls':>5} {'latency':>8} {'late p50/max':>14} {'to handler p50/max':>19} {'wait':>6}"
              f" {'handler':>8} {'cpu':>6} {'wait':>6} {'faults before':>13}")
        for g, s in split(rows).items():
            print(f"  {g:36} {s['calls']:5d} {fmt(s['latency_p50'], 8)} {fmt(s['late_p50'], 6)}/"
                  f"{fmt(s['late_max'], 7)} {fmt(s['to_handler_p50'], 9)}/{fmt(s['to_handler_max'], 9)} {fmt(s['pre_wait_p50'], 6)}"
                  f" {fmt(s['handler_p50'], 8)} {fmt(s['cpu_p50'], 6)} {fmt(s['wait_p50'], 6)}"
                  f" {fmt(s['pre_majflt_per_call'], 13, 0)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
