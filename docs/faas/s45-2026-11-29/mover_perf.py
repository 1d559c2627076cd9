#!/usr/bin/env python3
"""Where memext's mover and reclaimer threads spend a perf recording
(`perf record -F 499 -e cpu-clock -e sched:sched_switch -g --tid MOVER,RECLAIM`):
on-CPU samples by the syscall path they are in, and off-CPU time (from a
switch-out to the thread's next event) by where it blocked.
  perf script -i FILE -F comm,tid,time,event,ip,sym | mover_perf.py"""
import collections
import re
import sys

ON = ("madvise_collapse", "swapin_walk_pmd_entry", "madvise_cold_or_pageout",
      "try_to_free_mem_cgroup_pages", "mem_cgroup_resize", "pagemap_scan")
OFF = ("blk_mq_get_tag", "folio_wait_bit", "rwsem", "futex", "hrtimer_nanosleep",
       "io_schedule", "__cond_resched", "mutex_lock", "schedule_timeout")


def events(lines):
    cur, stack = None, []
    for line in lines:
        m = re.match(r"^\s*(memext-\S+)\s+(\d+)\s+([\d.]+):\s+(\S+)", line)
        if m:
            if cur:
                yield (*cur, stack)
            cur, stack = (m.group(1), m.group(2), float(m.group(3)), m.group(4)), []
        elif len(line.split()) >= 2:
            stack.append(line.split()[1])
    if cur:
        yield (*cur, stack)


def main():
    by = collections.defaultdict(list)
    for e in events(sys.stdin):
        by[(e[0], e[1])].append(e)
    for (comm, tid), es in sorted(by.items()):
        es.sort(key=lambda e: e[2])
        on, off = collections.Counter(), collections.Counter()
        for a, b in zip(es, es[1:] + [None]):
            frames = " ".join(a[4])
            if "cpu-clock" in a[3]:
                on[next((k for k in ON if k in frames), "other")] += 1
            elif "sched_switch" in a[3] and b is not None:
                off[next((k for k in OFF if k in frames), "other")] += b[2] - a[2]
        n = sum(on.values())
        print(f"{comm} ({tid}), {es[-1][2] - es[0][2]:.1f} s recorded")
        print("  on CPU (samples): " + ", ".join(f"{k} {v} ({100 * v / n:.0f}%)" for k, v in on.most_common()))
        print("  off CPU (s): " + ", ".join(f"{k} {v:.2f}" for k, v in off.most_common()))


if __name__ == "__main__":
    main()
