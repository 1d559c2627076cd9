#!/usr/bin/env python3
"""Who reclaimed at the memory cgroups' limits, from `perf script` of
vmscan:mm_vmscan_memcg_reclaim_begin/_end recorded system-wide (attr.sh):
per kind of task (memext's threads, which lower limits; the functions'
processes, whose charges failed at a limit, the parent's cap or their own;
anything else), the reclaims, the pages they reclaimed and the time they
took.  attr.py PERF_SCRIPT_TEXT [SECONDS]: with SECONDS, only the reclaims
that ended within SECONDS of the first event recorded."""
import collections, re, sys

LINE = re.compile(r"^\s*(\S.*?)\s+(\d+)\s+\[\d+\]\s+([\d.]+):\s+vmscan:mm_vmscan_memcg_reclaim_(begin|end):\s*(.*)$")


def kind(comm):
    if comm.startswith("memext"):
        return f"memext ({comm})"
    if comm.startswith("python"):
        return "functions (python)"
    return f"other ({comm})"


def main(path, within=None):
    began, rows, first = {}, collections.defaultdict(lambda: [0, 0, 0.0]), None
    for line in open(path, errors="replace"):
        m = LINE.match(line)
        if not m:
            continue
        comm, pid, t, what, rest = m.group(1), int(m.group(2)), float(m.group(3)), m.group(4), m.group(5)
        first = t if first is None else first
        if within is not None and t - first > within:
            break
        if what == "begin":
            began[pid] = t
            continue
        n = int(re.search(r"nr_reclaimed=(\d+)", rest).group(1))
        r = rows[kind(comm)]
        r[0] += 1
        r[1] += n
        r[2] += t - began.pop(pid, t)
    total = sum(r[1] for r in rows.values()) or 1
    print("| who | reclaims | pages reclaimed | MiB | share | time in reclaim (s) |")
    print("|---|---|---|---|---|---|")
    for k, (calls, pages, secs) in sorted(rows.items(), key=lambda kv: -kv[1][1]):
        print(f"| {k} | {calls} | {pages} | {pages * 4 // 1024} | {pages / total:.0%} | {secs:.1f} |")


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else None)
