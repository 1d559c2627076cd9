#!/usr/bin/env python3
"""bench/wake: how fast an idle container's memory is back when it wakes.

A context with a W MiB working set sits idle and is pushed out of DRAM, then
touches its whole working set again. Measured side by side in one run, under
the same memory cap and the same swap tier:
  plain    plain Linux: the kernel pushes it out under pressure from another
           context's allocation (which then ends); the touch faults it back.
  reactive memext pushes it out; the touch itself is the wake, which memext
           detects by polling and answers with a bulk bring-back.
  periodic the context wakes every --period seconds; memext learns the period
           and brings it back before the wake, and maps it back (huge pages,
           MADV_COLLAPSE) so that the touch takes no fault.
  periodic-nomap  the same with map_back = false: brought back into the swap
           cache only (MADV_WILLNEED), every first touch a minor fault.
  follower the context wakes 1 s after a small "front" context, at irregular
           intervals (no period to learn); memext learns that it follows and
           brings it back when the front wakes.
Plain and reactive are alternated --trials times (the median of each is
reported, with every pair's ratio): this VM's own speed drifts between runs.
For a detected wake the daemon's log (JSON events, `--log-format json`) also
gives how long after the touch began it saw the wake, and how long its
read-back took. Every mode's row is its median wake (medians against medians),
with that wake's share pushed out beside it; the best wake is printed apart.
And the daemon's own CPU use while managing --contexts idle contexts.

Contexts are processes in cgroups of their own (crates/memext-e2e toucher);
the cgroups, swap tier and daemon are made by the harness and removed again,
also on error or Ctrl-C. A benchmark: it measures and prints, it asserts nothing.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import memextbench as mb  # noqa: E402

MIB = 1 << 20


def tier_config(work, tier, swap_mib):
    if tier == "zram":
        t = f'[tiers.zram]\nsize = "{swap_mib}MiB"\nalgorithm = "lz4"\npriority = 100\n'
    else:
        t = f'[[tiers.swapfile]]\npath = "{work}/swap0"\nsize = "{swap_mib}MiB"\npriority = 10\n'
    return f'[host]\nstate_dir = "{work}/state"\n\n{t}'


def daemon_config(work, parent, args, extra="", map_back=True):
    return (
        f'[host]\nstate_dir = "{work}/dstate"\n\n'
        f'[[select]]\ncgroup = "{parent}/*"\nclass = "extend"\n\n'
        f'[class.extend]\nidle_after = "{args.idle_after}s"\nfloor = "16MiB"\n'
        f'prefetch_bandwidth = "{args.prefetch_bandwidth}"\npageout_bandwidth = "2GiB"\n'
        f'map_back = {"true" if map_back else "false"}\n\n'
        f'[daemon]\ncapacity = "{args.cap_mib}MiB"\ntick = "500ms"\npoll = "20ms"\n'
        f'socket = "{work}/memext.sock"\n{extra}'
    )


def start_daemon(work, cfg_text, cleanup, name):
    cfg = f"{work}/{name}.toml"
    with open(cfg, "w") as f:
        f.write(cfg_text)
    log = open(f"{work}/{name}.log", "w")
    p = subprocess.Popen([os.path.join(mb.BIN, "memext"), "--log-format", "json", "--config", cfg, "daemon"],
                         stdout=subprocess.DEVNULL, stderr=log)
    cleanup.push(f"daemon {p.pid}", lambda: (p.poll() is None and p.terminate(), p.wait()))
    return p


def wait_until(what, secs, cond):
    t0 = time.time()
    while not cond():
        if time.time() - t0 > secs:
            raise TimeoutError(f"{what}: not within {secs} s")
        time.sleep(0.1)


def fmt_ms(seconds):
    return "?" if seconds is None else f"{1000 * seconds:.0f} ms"


def median_run(runs):
    """The run with the median touch time (of an odd count; the lower middle
    of an even one), with every run's time beside it."""
    if not runs:
        return None
    r = dict(sorted(runs, key=lambda r: r["seconds"])[(len(runs) - 1) // 2])
    r["all_seconds"] = [x["seconds"] for x in runs]
    return r


def plain(args, base, cleanup, trial):
    parent = f"{base}-plain-{trial}"
    mb.make_cgroup(f"{parent}/hog", cleanup)
    mb.set_memory_cap(parent, args.cap_mib * MIB)
    s = mb.context(f"{parent}/sleeper", args.ws_mib * MIB, cleanup)
    time.sleep(args.idle_after)
    # Another context's allocation fills the cap: the kernel reclaims the idle one.
    hog = mb.context(f"{parent}/hog", args.cap_mib * MIB, cleanup)
    out = 1 - mb.mapped_fraction(s.p.pid)
    hog.stop()
    time.sleep(1)
    r = s.touch()
    r["pushed_out_share"] = out
    s.stop()
    return r


def log_times(path, event, **fields):
    """(wall-clock seconds, event) of the daemon's `event` events whose fields
    equal `fields`."""
    return [(e["at"], e) for e in mb.daemon_events(path, event) if all(e.get(k) == v for k, v in fields.items())]


def reactive(args, base, work, cleanup, trial):
    name = f"reactive-{trial}"
    parent = f"{base}-{name}"
    mb.make_cgroup(parent, cleanup)
    mb.set_memory_cap(parent, args.cap_mib * MIB)
    s = mb.context(f"{parent}/sleeper", args.ws_mib * MIB, cleanup)
    d = start_daemon(work, daemon_config(work, parent, args), cleanup, name)
    wait_until("the push-out", 120, lambda: mb.mapped_fraction(s.p.pid) <= 0.2)
    time.sleep(1.5)
    out = 1 - mb.mapped_fraction(s.p.pid)
    t_touch, cpu0 = time.time(), mb.proc_cpu_seconds(d.pid)
    r = s.touch()
    r["pushed_out_share"] = out
    time.sleep(0.5)  # the read-back's own log line
    r["daemon_cpu_s"] = mb.proc_cpu_seconds(d.pid) - cpu0
    d.terminate()
    d.wait()
    s.stop()
    # From the daemon's log: when it saw the wake, and how long its read-back took.
    log = f"{work}/{name}.log"
    # Seen between ticks: by its kernel wake event (or by polling, where it has none).
    woke = [t for t, e in log_times(log, "woke") if e.get("via") in ("event", "poll") and t >= t_touch - 0.05]
    read = [e["seconds"] for t, e in log_times(log, "read-back") if t >= t_touch - 0.05]
    r["detected_after_s"] = woke[0] - t_touch if woke else None
    r["read_back_s"] = read[0] if read else None
    return r


def periodic(args, base, work, cleanup, map_back=True):
    name = "periodic" if map_back else "periodic-nomap"
    parent = f"{base}-{name}"
    mb.make_cgroup(parent, cleanup)
    mb.set_memory_cap(parent, args.cap_mib * MIB)
    s = mb.context(f"{parent}/sleeper", args.ws_mib * MIB, cleanup)
    extra = f'prefetch_lead = "{args.lead}s"\n'
    d = start_daemon(work, daemon_config(work, parent, args, extra, map_back), cleanup, name)
    wait_until("the first push-out", 120, lambda: mb.mapped_fraction(s.p.pid) <= 0.2)
    t0 = time.time() + 1
    wakes = []
    for k in range(args.wakes):
        while time.time() < t0 + k * args.period:
            time.sleep(0.005)
        out = 1 - mb.mapped_fraction(s.p.pid)
        incore, total = s.incore()
        r = s.touch()
        r.update(pushed_out_share=out, incore_share_before=incore / total, wake=k + 1)
        wakes.append(r)
        mb.log(f"  {name} wake {k + 1}: {r['seconds']:.3f} s, {r['major_faults']} major faults, "
               f"{100 * r['incore_share_before']:.0f}% in memory before the touch")
    d.terminate()
    d.wait()
    s.stop()
    log = f"{work}/{name}.log"
    return {"wakes": wakes, "predicted_bring_backs": len(log_times(log, "bringing-back", reason="periodic")),
            "map_back": map_back}


FOLLOW_AT = [0, 11, 25, 36, 52, 63, 78]  # irregular: no period within 20%


def follower(args, base, work, cleanup):
    parent = f"{base}-follower"
    mb.make_cgroup(parent, cleanup)
    mb.set_memory_cap(parent, (args.cap_mib + 96) * MIB)
    front = mb.context(f"{parent}/front", 64 * MIB, cleanup)
    back = mb.context(f"{parent}/back", args.ws_mib * MIB, cleanup)
    cfg = daemon_config(work, parent, args).replace(f'capacity = "{args.cap_mib}MiB"', f'capacity = "{args.cap_mib + 96}MiB"')
    d = start_daemon(work, cfg, cleanup, "follower")
    wait_until("the first push-out", 120, lambda: mb.mapped_fraction(back.p.pid) <= 0.2)
    t0 = time.time() + 1
    wakes = []
    for k, at in enumerate(FOLLOW_AT):
        while time.time() < t0 + at:
            time.sleep(0.005)
        front.touch()
        while time.time() < t0 + at + 1.0:
            time.sleep(0.005)
        out = 1 - mb.mapped_fraction(back.p.pid)
        incore, total = back.incore()
        r = back.touch()
        r.update(pushed_out_share=out, incore_share_before=incore / total, wake=k + 1)
        wakes.append(r)
        mb.log(f"  follower wake {k + 1}: {r['seconds']:.3f} s, {r['major_faults']} major faults, "
               f"{100 * r['incore_share_before']:.0f}% in memory before the touch")
    d.terminate()
    d.wait()
    front.stop()
    back.stop()
    log = f"{work}/follower.log"
    return {"wakes": wakes, "follow_bring_backs": len(log_times(log, "bringing-back", reason="follows-leader")),
            "periodic_bring_backs": len(log_times(log, "bringing-back", reason="periodic"))}


def daemon_cpu(args, base, work, cleanup):
    parent = f"{base}-many"
    ts = []
    for i in range(args.contexts):
        ts.append(mb.context(f"{parent}/c{i:02d}", 8 * MIB, cleanup))
    d = start_daemon(work, daemon_config(work, parent, args), cleanup, "many")
    time.sleep(3)  # start-up and the first push-outs are not the steady state
    c0, w0 = mb.proc_cpu_seconds(d.pid), time.time()
    time.sleep(args.cpu_seconds)
    c1, w1 = mb.proc_cpu_seconds(d.pid), time.time()
    d.terminate()
    d.wait()
    for t in ts:
        t.stop()
    return {"contexts": args.contexts, "seconds": w1 - w0, "cpu_percent_of_one_core": 100 * (c1 - c0) / (w1 - w0)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ws-mib", type=int, default=512, help="working set of the waking context (MiB)")
    ap.add_argument("--cap-mib", type=int, default=0, help="memory cap of the contexts' parent (default: ws + 128)")
    ap.add_argument("--tier", choices=["swapfile", "zram"], default="swapfile")
    ap.add_argument("--idle-after", type=float, default=2.0, help="seconds without activity before idle")
    ap.add_argument("--prefetch-bandwidth", default="4GiB", help="memext's bring-back cap, per second")
    ap.add_argument("--period", type=float, default=12.0, help="seconds between periodic wakes")
    ap.add_argument("--lead", type=float, default=4.0, help="bring back this long before a predicted wake")
    ap.add_argument("--wakes", type=int, default=7, help="periodic wakes (the period is known from the 5th)")
    ap.add_argument("--trials", type=int, default=3,
                    help="plain and detected wakes, alternated; the median of each is reported (default 3)")
    ap.add_argument("--contexts", type=int, default=50, help="idle contexts for the daemon CPU measurement")
    ap.add_argument("--cpu-seconds", type=float, default=30.0, help="how long to measure the daemon's CPU")
    ap.add_argument("--modes", default="plain,reactive,periodic,periodic-nomap,follower,cpu",
                    help="comma-separated subset of plain,reactive,periodic,periodic-nomap,follower,cpu")
    ap.add_argument("--out", default=None, help="results directory (default results/wake-TIMESTAMP)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench/wake needs root (cgroups, swap)")
    args.cap_mib = args.cap_mib or args.ws_mib + 128
    out = args.out or os.path.join(mb.ROOT, "results", time.strftime("wake-%Y%m%d-%H%M%S"))
    os.makedirs(out, exist_ok=True)
    mb.build()
    cleanup = mb.Cleanup()
    base = f"/memext-bench-wake-{os.getpid()}"
    work = mb.work_dir("wake", cleanup)
    try:
        tcfg = f"{work}/tiers.toml"
        with open(tcfg, "w") as f:
            f.write(tier_config(work, args.tier, 2 * args.cap_mib + 512))
        mb.memext(["--config", tcfg, "tiers", "up"], check=True, capture_output=True)
        cleanup.push("tiers", lambda: mb.memext(["--config", tcfg, "tiers", "down"], capture_output=True))
        modes = set(args.modes.split(","))
        r_plain = r_react = r_per = r_nomap = r_fol = r_cpu = None
        plains, reacts = [], []
        # Plain Linux and the detected wake, alternated --trials times: the
        # machine's own speed drifts, one pair is not a ratio.
        for trial in range(1, args.trials + 1):
            if "plain" in modes:
                mb.log(f"plain Linux ({trial}/{args.trials}): {args.ws_mib} MiB pushed out by pressure, then touched")
                plains.append(plain(args, base, cleanup, trial))
                mb.log(f"  {plains[-1]['seconds']:.3f} s, {plains[-1]['major_faults']} major faults, "
                       f"{100 * plains[-1]['pushed_out_share']:.0f}% pushed out")
            if "reactive" in modes:
                mb.log(f"memext, reactive ({trial}/{args.trials}): pushed out by memext, the touch is the wake")
                reacts.append(reactive(args, base, work, cleanup, trial))
                r = reacts[-1]
                mb.log(f"  {r['seconds']:.3f} s, {r['major_faults']} major faults, wake seen after "
                       f"{fmt_ms(r['detected_after_s'])}, read back in {fmt_ms(r['read_back_s'])} "
                       f"(daemon CPU {fmt_ms(r['daemon_cpu_s'])})")
        r_plain = median_run(plains)
        r_react = median_run(reacts)
        if "periodic" in modes:
            mb.log(f"memext, periodic: a wake every {args.period} s, {args.wakes} wakes")
            r_per = periodic(args, base, work, cleanup)
        if "periodic-nomap" in modes:
            mb.log(f"memext, periodic without map_back: a wake every {args.period} s, {args.wakes} wakes")
            r_nomap = periodic(args, base, work, cleanup, map_back=False)
        if "follower" in modes:
            mb.log("memext, follower: wakes 1 s after another context, at irregular intervals")
            r_fol = follower(args, base, work, cleanup)
        if "cpu" in modes:
            mb.log(f"daemon CPU with {args.contexts} idle contexts, {args.cpu_seconds} s")
            r_cpu = daemon_cpu(args, base, work, cleanup)
    finally:
        for name in os.listdir(work):
            if name.endswith(".log"):
                subprocess.run(["cp", os.path.join(work, name), out])
        cleanup.run()
    res = {"parameters": vars(args), "kernel": os.uname().release, "cgroup": "v1" if mb.V1 else "v2",
           "plain": r_plain, "reactive": r_react, "plain_trials": plains, "reactive_trials": reacts, "periodic": r_per, "periodic_nomap": r_nomap, "follower": r_fol, "daemon_cpu": r_cpu}
    mb.write_json(os.path.join(out, "results.json"), res)
    rows = []
    if r_plain:
        rows.append(("plain Linux", r_plain))
    if r_react:
        rows.append(("memext, wake detected", r_react))
    # Every row is a median (the lower middle of an even count), like the
    # plain and detected rows: a best case against a median is no ratio.
    predicted = [w for w in (r_per or {}).get("wakes", []) if w["wake"] >= 5]
    if predicted:
        rows.append(("memext, periodic, mapped back", median_run(predicted)))
    nomap = [w for w in (r_nomap or {}).get("wakes", []) if w["wake"] >= 5]
    if nomap:
        rows.append(("memext, periodic, WILLNEED only", median_run(nomap)))
    followed = [w for w in (r_fol or {}).get("wakes", []) if w["wake"] >= 4]
    if followed:
        rows.append(("memext, follows another context", median_run(followed)))
    ratio = lambda r: r_plain["seconds"] / max(r["seconds"], 1e-9) if r_plain else float("nan")
    print(f"\nbench/wake: {args.ws_mib} MiB working set, cap {args.cap_mib} MiB, tier {args.tier}, "
          f"cgroup {res['cgroup']}, kernel {res['kernel']}")
    print(f"{'mode (median wake)':<32} {'pushed out':>10} {'touch (s)':>10} {'major faults':>13} "
          f"{'minor faults':>13} {'vs plain':>9} {'best':>9}")
    for name, r in rows:
        best = min(r["all_seconds"])
        print(f"{name:<32} {100 * r['pushed_out_share']:>9.0f}% {r['seconds']:>10.3f} {r['major_faults']:>13} "
              f"{r['minor_faults']:>13} {ratio(r):>8.1f}x {best:>8.3f}s")
    if r_plain and r_react:
        pairs = ", ".join(f"{p / q:.1f}x" for p, q in zip(r_plain["all_seconds"], r_react["all_seconds"]))
        print(f"plain Linux touches: {', '.join('%.3fs' % x for x in r_plain['all_seconds'])}; "
              f"detected wakes: {', '.join('%.3fs' % x for x in r_react['all_seconds'])} (pairwise {pairs})")
    if r_react:
        seen = [r["detected_after_s"] for r in reacts if r["detected_after_s"] is not None]
        reads = [r["read_back_s"] for r in reacts if r["read_back_s"] is not None]
        if seen and reads:
            floor = statistics.median(seen) + statistics.median(reads)
            print(f"detected wakes: seen by the daemon {fmt_ms(statistics.median(seen))} after the touch began "
                  f"(median of {len(seen)}), its read-back took {fmt_ms(statistics.median(reads))}")
            # From a swap file the touch waits for memext's reads (it takes almost
            # no major fault of its own), so it cannot end before they are all
            # issued, nor before the device has delivered them. (From zram the
            # process decompresses pages itself too: no such bound.)
            if r_plain and args.tier == "swapfile":
                print(f"  the touch cannot end before memext's reads are all issued ({floor:.3f} s after it "
                      f"began): at most {r_plain['seconds'] / floor:.1f}x plain Linux's {r_plain['seconds']:.3f} s")
    if r_per:
        times = ", ".join("%.3fs" % w["seconds"] for w in predicted)
        print(f"periodic bring-backs logged: {r_per['predicted_bring_backs']} (wakes 5..{args.wakes}: {times})")
    if r_nomap:
        times = ", ".join("%.3fs" % w["seconds"] for w in nomap)
        print(f"periodic without map_back, bring-backs logged: {r_nomap['predicted_bring_backs']} "
              f"(wakes 5..{args.wakes}: {times})")
    if r_fol:
        ftimes = ", ".join("%.3fs" % w["seconds"] for w in followed)
        print(f"follow-the-leader bring-backs logged: {r_fol['follow_bring_backs']}, periodic: "
              f"{r_fol['periodic_bring_backs']} (follower wakes 4..{len(FOLLOW_AT)}: {ftimes})")
    if r_cpu:
        print(f"daemon CPU with {r_cpu['contexts']} idle contexts: {r_cpu['cpu_percent_of_one_core']:.2f}% of one core")
    print(f"results and daemon logs: {out}")

if __name__ == "__main__":
    main()
