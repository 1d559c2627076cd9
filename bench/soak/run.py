#!/usr/bin/env python3
"""bench/soak: does the daemon stay flat over hours of contexts waking and sleeping?

--contexts plain cgroups under /memext-bench-soak, each with one process of
bench/peers' noise (noise.py burst): it holds --mib MiB and, at each wake,
re-touches all of it. The schedules are mixed, a third each: cron (every P s),
jitter (P +- 25%), Poisson (mean P), P drawn per context from --period; one in
--critical-every is selected critical, the rest extend. `memext daemon` runs
over them for --minutes with a swap file set up by `memext tiers`, and every
--sample seconds the bench reads the daemon's own figures from the host:

  RSS, open fds      /proc/PID/status, /proc/PID/fd
  CPU                utime + stime of /proc/PID/stat over the interval
  tracked, ledger    `memext status --json`; records in STATE_DIR/daemon.json + daemon.journal
  wakes              the noise's own log: every wake and how long its touch took

At the end the daemon gets SIGTERM and every knob memext writes is read back in
every context (memory limit, OOM switch, CPU weight, freezer): none may be left
changed. Targets (issue 17): RSS growth under 1 MiB from the end of the warm-up
to the end, CPU flat (the last quarter's mean within 25% of the first's), no knob
left changed, no daemon error. A benchmark: it measures and prints (and writes
results.json and soak.png); it asserts nothing. Everything it starts is removed
again, also on Ctrl-C.
"""
import argparse
import json
import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import memextbench as mb  # noqa: E402

PARENT = "/memext-bench-soak"
NOISE = os.path.join(mb.ROOT, "bench", "peers", "noise.py")
SCHEDULES = ("cron", "jitter", "poisson")
# The knobs memext may write in a v1 context, and the file each lives in.
KNOBS = (("memory", "memory.limit_in_bytes"), ("memory", "memory.oom_control"),
         ("cpu", "cpu.shares"), ("freezer", "freezer.state"))


def knobs(path):
    out = {}
    for h, f in KNOBS:
        try:
            with open(f"{mb.CG}/{h}{path}/{f}") as fh:
                text = fh.read().strip()
        except OSError:
            continue
        out[f] = text.split("\n")[0] if f != "memory.oom_control" else text.split("\n")[0].split()[1]
    return out


def figures(pid, cfg, state):
    return {"t": time.time(), "cpu_s": mb.proc_cpu_seconds(pid), **mb.daemon_figures(pid, cfg, state)}


def wakes(logs):
    out = []
    for p in logs:
        try:
            for line in open(p):
                r = json.loads(line)
                if r.get("op") == "wake":
                    out.append(r)
        except (OSError, ValueError):
            pass
    return out


def plot(out, samples, warm):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    t0 = samples[0]["t"]
    mins = [(s["t"] - t0) / 60 for s in samples[1:]]
    cpu = [100 * (b["cpu_s"] - a["cpu_s"]) / (b["t"] - a["t"]) for a, b in zip(samples, samples[1:])]
    fig, ax = plt.subplots(2, 1, figsize=(8, 5), sharex=True)
    ax[0].plot([(s["t"] - t0) / 60 for s in samples], [s["rss_kib"] / 1024 for s in samples])
    ax[0].set_ylabel("daemon RSS MiB")
    ax[1].plot(mins, cpu)
    ax[1].set_ylabel("daemon CPU % of a core")
    ax[1].set_xlabel("minutes")
    for a in ax:
        a.axvline(warm / 60, color="grey", lw=0.5)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "soak.png"), dpi=100)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--contexts", type=int, default=50, help="contexts (default 50)")
    ap.add_argument("--mib", type=int, default=16, help="heap of each (default 16)")
    ap.add_argument("--period", default="20,90", help="MIN,MAX seconds between wakes (default 20,90)")
    ap.add_argument("--critical-every", type=int, default=10, help="one in N critical (default 10)")
    ap.add_argument("--minutes", type=float, default=60.0, help="length of the run (default 60)")
    ap.add_argument("--warmup", type=float, default=120.0, help="seconds before the first figures count (default 120)")
    ap.add_argument("--sample", type=float, default=60.0, help="seconds between samples (default 60)")
    ap.add_argument("--smoke", action="store_true", help="6 contexts for 40 s, for the test suite")
    a = mb.parse_bench_args(ap, "soak", "cgroups, swap")
    if a.smoke:
        a.contexts, a.period, a.minutes, a.warmup, a.sample = 6, "3,6", 40 / 60, 10.0, 5.0
    lo, hi = (float(x) for x in a.period.split(","))
    if a.contexts < 1 or lo <= 0 or hi < lo or a.minutes * 60 <= a.warmup or a.sample <= 0:
        ap.error("--contexts >= 1, --period 0 < MIN <= MAX, --minutes longer than --warmup, --sample > 0")
    out = a.out
    cleanup, work = mb.bench_workspace("soak", a)
    rng = random.Random(1)
    plan = [{"path": f"{PARENT}/c{i:03d}", "schedule": SCHEDULES[i % 3],
             "period": round(rng.uniform(lo, hi), 1),
             "class": "critical" if i % a.critical_every == 0 else "extend"} for i in range(a.contexts)]
    try:
        mb.make_cgroup(PARENT, cleanup)
        state = os.path.join(work, "state")
        cfg = os.path.join(work, "memext.toml")
        with open(cfg, "w") as f:
            f.write(f'[host]\nstate_dir = "{state}"\n\n')
            f.writelines(f'[[select]]\ncgroup = "{c["path"]}"\nclass = "critical"\n\n'
                         for c in plan if c["class"] == "critical")
            f.write(f'[[select]]\ncgroup = "{PARENT}/*"\nclass = "extend"\n\n'
                    f'[class.extend]\nidle_after = "5s"\nfloor = "4MiB"\n\n'
                    f'[daemon]\ncapacity = "{max(256, a.contexts * a.mib // 2)}MiB"\n'
                    f'socket = "{work}/memext.sock"\n\n'
                    f'[[tiers.swapfile]]\npath = "{work}/swap0"\nsize = "2GiB"\npriority = 10\n')
        mb.memext(["--config", cfg, "tiers", "up"], check=True, capture_output=True)
        cleanup.push("tiers", lambda: mb.memext(["--config", cfg, "tiers", "down"], capture_output=True))
        start = time.time() + 2
        logs = []
        for i, c in enumerate(plan):
            mb.make_cgroup(c["path"], cleanup)
            logs.append(os.path.join(work, f"noise{i}.log"))
            p = mb.spawn_in(c["path"], ["python3", NOISE, "burst", logs[-1], str(a.mib), c["schedule"],
                                         str(c["period"]), str(start), str(i)])
            cleanup.push(f"noise {p.pid}", lambda p=p: (p.kill(), p.wait()))
        before = {c["path"]: knobs(c["path"]) for c in plan}
        log = os.path.join(out, "memext-daemon.log")
        stop = mb.start_daemon(cfg, log, cleanup)
        samples, t0, end = [], time.time(), time.time() + a.minutes * 60
        mb.log(f"{a.contexts} contexts ({sum(c['class'] == 'critical' for c in plan)} critical), "
               f"{a.minutes:.0f} min, a sample every {a.sample:.0f} s")
        while time.time() < end:
            time.sleep(min(a.sample, max(0.0, end - time.time())))
            s = figures(stop.pid, cfg, state)
            samples.append(s)
            prev = samples[-2] if len(samples) > 1 else None
            cpu = 100 * (s["cpu_s"] - prev["cpu_s"]) / (s["t"] - prev["t"]) if prev else float("nan")
            mb.log(f"  {(s['t'] - t0) / 60:5.1f} min: RSS {s['rss_kib'] / 1024:.1f} MiB, CPU {cpu:.1f}% of a core, "
                   f"fds {s['fds']}, tracked {s['tracked']}, ledger {s['ledger']}, wakes {len(wakes(logs))}")
        stop()
        after = {c["path"]: knobs(c["path"]) for c in plan}
        problems = mb.daemon_problems(log)
        w = wakes(logs)
    finally:
        cleanup.run()
    warm = [s for s in samples if s["t"] - t0 >= a.warmup]
    rates = [(b["cpu_s"] - x["cpu_s"]) / (b["t"] - x["t"]) * 100 for x, b in zip(warm, warm[1:])]
    q = max(1, len(rates) // 4)
    first, last = (sum(rates[:q]) / q, sum(rates[-q:]) / q) if rates else (float("nan"), float("nan"))
    growth = warm[-1]["rss_kib"] - warm[0]["rss_kib"] if len(warm) > 1 else 0
    changed = {p: (before[p], after[p]) for p in before if before[p] != after[p]}
    errors = [p for p in problems if p.get("level") == "ERROR"]
    touches = sorted(x["lat"] for x in w) or [float("nan")]
    res = {"parameters": vars(a), "plan": plan, "machine": mb.machine_facts(), "samples": samples,
           "rss_growth_kib": growth, "cpu_first_quarter_pct": first, "cpu_last_quarter_pct": last,
           "knobs_left_changed": changed, "daemon_warnings_and_errors": problems, "wakes": len(w),
           "touch_p50_s": touches[len(touches) // 2], "touch_p99_s": touches[min(len(touches) - 1, len(touches) * 99 // 100)]}
    mb.write_json(os.path.join(out, "results.json"), res)
    plot(out, samples, a.warmup)
    print(f"\nbench/soak: {a.contexts} contexts, {a.minutes:.0f} min, {len(w)} wakes "
          f"(touch p50 {res['touch_p50_s'] * 1000:.0f} ms, p99 {res['touch_p99_s'] * 1000:.0f} ms)")
    print(f"daemon RSS after the warm-up {warm[0]['rss_kib'] / 1024 if warm else float('nan'):.1f} MiB, "
          f"growth {growth} KiB (target < 1024)")
    print(f"daemon CPU, first quarter {first:.2f}% -> last quarter {last:.2f}% of a core (target within 25%)")
    print(f"fds {warm[0]['fds'] if warm else '-'} -> {warm[-1]['fds'] if warm else '-'}; "
          f"knobs left changed after SIGTERM: {len(changed)}; daemon errors {len(errors)}, "
          f"warnings {len(problems) - len(errors)}")
    for p in problems[:10]:
        print(f"  {p.get('level')}: {p.get('message')}")
    ok = (growth < 1024 and not changed and not errors and rates and abs(last - first) <= 0.25 * max(first, 0.01))
    print(f"targets: {'met' if ok else 'MISSED'}\nresults: {out}")


if __name__ == "__main__":
    main()
