#!/usr/bin/env python3
"""Where a call's time went, from a scheduler trace taken during a bench/faas
run (perf record -k CLOCK_MONOTONIC of sched_switch, sched_waking, as
traced.sh takes it). For every call inside the trace's window: from its due
time to its answer, the function's server was (a) waiting for the call to
arrive, (b) runnable but not running (who ran on the CPUs instead), (c)
running, (d) asleep (S or D); then the invoker's thread that took the answer
waited for a CPU. Calls are split as overlap.py splits them: warm calls
during another function's cold call (100+ major faults in its handler) and
the other warm calls.

Usage: schedwhy.py TRACE_DIR [FUNCTION T]
  TRACE_DIR as traced.sh leaves it (run/, pids-functions.txt,
  tids-invoker.txt, tids-daemon.txt, epoch-minus-mono.txt) with sched.txt,
  the output of `perf script -F comm,tid,cpu,time,event,trace -i
  sched.data` (or sched.txt.gz). With FUNCTION T (a call's function and its t, as in
  calls-*.csv): that call's timeline instead, ms from its due time: the
  function's states and what ran on each CPU."""
import collections
import csv
import glob
import gzip
import json
import os
import re
import statistics
import sys

COLD_MAJFLT = 100
WITHIN_MS = 8.0
LINE = re.compile(r"^\s*(.*?)\s+(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+sched:(\w+):\s+(.*)$")
SWITCH = re.compile(r"prev_comm=(.*?) prev_pid=(\d+) prev_prio=\d+ prev_state=(\S+) ==> next_comm=(.*?) next_pid=(\d+)")
WAKING = re.compile(r"comm=(.*?) pid=(\d+) prio=")


def read_events(path):
    """(time, cpu, kind, fields) in time order: kind 'switch' with (prev, state,
    next, prev_comm, next_comm), 'waking' with (waker, wakee, wakee_comm)."""
    ev = []
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        path += ".gz"
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            comm, tid, cpu, t, kind, rest = m.groups()
            if kind == "sched_switch":
                s = SWITCH.search(rest)
                if s:
                    ev.append((float(t), int(cpu), "switch", (int(s[2]), s[3], int(s[5]), s[1], s[4])))
            elif kind == "sched_waking":
                w = WAKING.search(rest)
                if w:
                    ev.append((float(t), int(cpu), "waking", (int(tid), int(w[2]), w[1], comm)))
    ev.sort(key=lambda e: e[0])
    return ev


def timelines(events):
    """Per task: a list of (start, end, what, cpu) with what in run / wait / sleep;
    per CPU: a list of (start, end, tid) it ran; the comm of every tid."""
    per = collections.defaultdict(list)
    runs = collections.defaultdict(list)
    comm = {}
    state = {}  # tid -> (what, since, cpu)
    on_cpu = {}  # cpu -> (tid, since)
    wakers = collections.defaultdict(list)  # wakee -> [(t, waker)]
    for t, cpu, kind, f in events:
        if kind == "waking":
            waker, wakee, wakee_comm, waker_comm = f
            comm[wakee], comm[waker] = wakee_comm, waker_comm
            wakers[wakee].append((t, waker))
            what, since, c = state.get(wakee, ("sleep", None, None))
            if what == "sleep":
                if since is not None:
                    per[wakee].append((since, t, "sleep", c))
                state[wakee] = ("wait", t, cpu)
            continue
        prev, pstate, nxt, pcomm, ncomm = f
        comm[prev], comm[nxt] = pcomm, ncomm
        if cpu in on_cpu:
            tid, since = on_cpu[cpu]
            runs[cpu].append((since, t, tid))
        if prev:
            what, since, c = state.get(prev, ("run", None, cpu))
            if since is not None:
                per[prev].append((since, t, "run", cpu))
            state[prev] = ("wait" if pstate.startswith("R") else "sleep:" + pstate[0], t, cpu)
        if nxt:
            what, since, c = state.get(nxt, ("wait", None, cpu))
            if since is not None:
                per[nxt].append((since, t, what if what.startswith("sleep") else "wait", c))
            state[nxt] = ("run", t, cpu)
        on_cpu[cpu] = (nxt, t)
    return per, runs, comm, wakers


def clip(intervals, a, b):
    for s, e, *rest in intervals:
        if e > a and s < b:
            yield (max(s, a), min(e, b), *rest)


def load_run(tdir):
    run = os.path.join(tdir, "run")
    with open(glob.glob(os.path.join(run, "functions-*.json"))[0]) as f:
        fj = json.load(f)
    with open(glob.glob(os.path.join(run, "calls-*.csv"))[0]) as f:
        calls = list(csv.DictReader(f))
    cid_name = {os.path.basename(cg): n for n, cg in fj["cgroups"].items()}
    fn_of = {}
    with open(os.path.join(tdir, "pids-functions.txt")) as f:
        for line in f:
            pid, cid = line.split()
            if cid in cid_name:
                fn_of[int(pid)] = cid_name[cid]
    with open(os.path.join(tdir, "tids-invoker.txt")) as f:
        invoker = {int(x) for x in f.read().split()}
    with open(os.path.join(tdir, "tids-daemon.txt")) as f:
        daemon = {int(line.split()[1]) for line in f if line.strip()}
    with open(os.path.join(tdir, "epoch-minus-mono.txt")) as f:
        offset = float(f.read())
    return fj["trace_start_epoch"] - offset, calls, fn_of, invoker, daemon


def num(row, key):
    return float(row[key] or 0)


def who(tid, fn_of, invoker, daemon, comm, cold_fns, me):
    if tid == 0:
        return "idle"
    if tid in fn_of:
        n = fn_of[tid]
        return "this function" if n == me else "a cold function" if n in cold_fns else "another function"
    if tid in invoker:
        return "invoker"
    if tid in daemon:
        return "memext daemon"
    c = comm.get(tid, "?")
    return re.sub(r"[/:-]?\d+(:\d+)?$", "", c.split("/")[0]) or c


def analyse(tdir):
    start, calls, fn_of, invoker, daemon = load_run(tdir)
    events = read_events(os.path.join(tdir, "sched.txt"))
    t_lo, t_hi = events[0][0], events[-1][0]
    per, runs, comm, wakers = timelines(events)
    pids_of = collections.defaultdict(set)
    for p, n in fn_of.items():
        pids_of[n].add(p)
    cold = [(start + num(r, "t"), start + num(r, "t") + num(r, "latency_ms") / 1e3, r["function"])
            for r in calls if num(r, "majflt") >= COLD_MAJFLT]
    out = {"beside": [], "apart": []}
    for r in calls:
        if num(r, "majflt") >= COLD_MAJFLT or r["error"]:
            continue
        a = start + num(r, "t")
        b = a + num(r, "latency_ms") / 1e3
        if a < t_lo + 0.5 or b > t_hi - 0.5:
            continue
        me = r["function"]
        cold_now = {fn for s, e, fn in cold if s <= b and e >= a and fn != me}
        beside = any(s <= a <= e for s, e, fn in cold if fn != me)
        seg = collections.Counter()
        for p in pids_of[me]:
            for s, e, what, _ in clip(per[p], a, b):
                seg[what.split(":")[0] if what.startswith("sleep") else what] += e - s
                if what.startswith("sleep:"):
                    seg["sleep " + what[6:]] += e - s
        # the answer: the last waking of an invoker thread by this function in the call
        answer_wait = 0.0
        for p in invoker:
            for t, w in wakers.get(p, []):
                if a <= t <= b and w in pids_of[me]:
                    waits = [e - s for s, e, what, _ in per[p] if what == "wait" and abs(s - t) < 1e-4]
                    answer_wait = max(answer_wait, waits[0] if waits else 0.0)
        cpu_by = collections.Counter()
        for c, lst in runs.items():
            for s, e, tid in clip(lst, a, b):
                cpu_by[who(tid, fn_of, invoker, daemon, comm, cold_now, me)] += e - s
        out["beside" if beside else "apart"].append((me, a - start, b - a, seg, answer_wait, cpu_by))
    return out


def ms(x):
    return f"{x * 1000:.1f}"


def one_call(tdir, fn, t):
    """Prints the timeline of `fn`'s call at `t` (s into the trace)."""
    start, calls, fn_of, invoker, daemon = load_run(tdir)
    per, runs, comm, wakers = timelines(read_events(os.path.join(tdir, "sched.txt")))
    rows = [r for r in calls if r["function"] == fn and abs(num(r, "t") - t) < 0.01]
    if not rows:
        sys.exit(f"schedwhy.py: no call of {fn} at {t} s")
    r = rows[0]
    a = start + num(r, "t")
    b, pad = a + num(r, "latency_ms") / 1e3, 0.002
    print(", ".join(f"{k} {v}" for k, v in r.items()))
    for p in (p for p, n in fn_of.items() if n == fn):
        print(f"{fn} (pid {p}):")
        for s, e, what, cpu in clip(per[p], a - pad, b + pad):
            print(f"  {ms(s - a):>7} {ms(e - a):>7} {what} on cpu {cpu}")
        for w_t, w in wakers.get(p, []):
            if a - pad <= w_t <= b + pad:
                print(f"  woken at {ms(w_t - a)} by {w} ({who(w, fn_of, invoker, daemon, comm, set(), fn)})")
    for c in sorted(runs):
        print(f"cpu {c}:")
        for s, e, tid in clip(runs[c], a - pad, b + pad):
            if e - s >= 0.0002:
                name = fn_of.get(tid) or comm.get(tid, "?")
                print(f"  {ms(s - a):>7} {ms(e - a):>7} {name} ({who(tid, fn_of, invoker, daemon, comm, set(), fn)})")


def main(argv):
    if len(argv) not in (1, 3) or argv[0] in ("-h", "--help"):
        sys.exit(__doc__)
    if len(argv) == 3:
        one_call(argv[0], argv[1], float(argv[2]))
        return
    out = analyse(argv[0])
    for group in ("beside", "apart"):
        rows = out[group]
        slow = [x for x in rows if x[2] * 1000 > WITHIN_MS]
        print(f"\n## warm calls {'during another function' + chr(39) + 's cold call' if group == 'beside' else 'apart from cold calls'}: "
              f"{len(rows)}, {len(slow)} over {WITHIN_MS:.0f} ms\n")
        for name, sub in (("all", rows), ("over 8 ms", slow)):
            if not sub:
                continue
            keys = ["run", "wait", "sleep", "sleep S", "sleep D"]
            med = {k: statistics.median([x[3][k] for x in sub]) for k in keys}
            print(f"- {name} ({len(sub)}): latency median {ms(statistics.median([x[2] for x in sub]))} ms; the function "
                  + ", ".join(f"{k} {ms(v)}" for k, v in med.items())
                  + f"; the invoker's wait for a CPU after the answer {ms(statistics.median([x[4] for x in sub]))} ms")
            tot = collections.Counter()
            for x in sub:
                tot.update(x[5])
            span = sum(x[2] for x in sub)
            print("  CPU time on both CPUs during these calls (share of 2 x their time): "
                  + ", ".join(f"{k} {100 * v / (2 * span):.0f}%" for k, v in tot.most_common(8)))
        print("\n| function | t | latency ms | run | wait | sleep S | sleep D | invoker's wait | what ran (ms) |")
        print("|---|---|---|---|---|---|---|---|---|")
        for me, t, lat, seg, aw, cpu_by in sorted(slow, key=lambda x: -x[2])[:25]:
            print(f"| {me} | {t:.2f} | {ms(lat)} | {ms(seg['run'])} | {ms(seg['wait'])} | {ms(seg['sleep S'])} | "
                  f"{ms(seg['sleep D'])} | {ms(aw)} | "
                  + ", ".join(f"{k} {ms(v)}" for k, v in cpu_by.most_common(5)) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
