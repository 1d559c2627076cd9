#!/usr/bin/env python3
"""bench/faas: a serverless host where most functions sleep.

--functions function containers (bench/faas/function.py: an HTTP handler on a
Unix socket over a heap of --heap-mib MIN,MAX MiB, every page read on each
call; real containers of a private Docker engine under the parent cgroup
/memext-faas) are invoked by a generated trace (bench/faas/trace.py: timer,
Poisson and bursty functions with the shape of Azure's and Huawei's published
traces; its parameters are saved with the results). The parent's DRAM is
capped at --cap-share of the functions' memory (heaps + 12 MiB each for the
interpreter).

Modes, each with fresh containers, in one invocation, their order rotated
from tier to tier and round to round:
  ideal   no cap, no swap area (with one on, this machine's own DAMON
          reclaimer pages out whatever sat idle for 60 s);
  linux   the cap and the tier, nothing else (plus the machine's DAMON);
  limits  + each function a static limit, its share of the cap (in
          proportion to its memory), from its creation on;
  zswap   + the kernel's zswap (lzo-rle, shrinker on) in front of the swap
          file (swapfile tier only: it is a tier of its own);
  senpai  + bench/peers/senpai.py (Meta's Senpai) on every function;
  memext  + `memext daemon`, every function an extend context pushed out only
          when needed (`push_out = "when-needed"`: idle functions keep their
          memory while the cap has room, those expected to be called soonest
          kept longest): the setting for a host whose DRAM is meant to be full;
  memext-idle  the same with memext's default (`push_out = "when-idle"`:
          every idle function pushed out to its floor at once).
  An analysis variant, not a peer: memext+daemon.foretold_calls=trace tells
  the daemon every call of the trace ahead (memext's engine with perfect
  foresight: what is the prediction's and what the mechanism's);
  =timers tells it the timer functions' calls alone. Another, of the fill:
  --fill memext starts the functions of the memext modes under no cap, memext
  told the cap as its capacity; the cap is set once memext has pushed the
  parent under it (the swap slots laid by memext's page-outs, one function at
  a time, instead of by the kernel's reclaim at the cap: session 81).
Tiers (--tiers): a swap file and zram, each set up by `memext tiers`.

Per mode: start the functions (their heaps are written under the cap), let
the controller settle for --settle s, replay the trace open loop (every call
sent at its time; its latency counts from then). Measured: invocation latency
p50/p99/p99.9 overall and per class, DRAM of the parent over time (mean, min,
max; the DRAM left unused under the cap while calls waited on memory), the
controller's CPU, swap traffic. The physical limit of a cold call is its
function's heap divided by the tier's bulk read-back bandwidth
(MADV_WILLNEED into the swap cache, `memext-e2e kbench`, measured at the start
of the run on each tier). Writes results.csv, series.json, summary.md,
dram.png, params.json (with the trace's parameters), calls-TIER-MODE-rN.csv;
for memext modes the daemon's log MODE-daemon-TIER-rN.log and
functions-TIER-MODE-rN.json (each function's cgroup, the trace's start).
Everything it starts is removed again, also on Ctrl-C. A benchmark: it
measures and prints, it asserts nothing.
"""
import argparse
import dataclasses
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "peers"))
sys.path.insert(0, HERE)
import memextbench as mb  # noqa: E402
from memextbench import Cleanup, log  # noqa: E402
import server as srv  # noqa: E402  (bench/peers: the capped server, zswap, Senpai, the window)
import host  # noqa: E402
import results  # noqa: E402
import trace as tr  # noqa: E402

PARENT = "/memext-faas"
MODES = ["ideal", "linux", "limits", "zswap", "senpai", "memext", "memext-idle"]
TIERS = ["swapfile", "zram"]
MIB = 1 << 20
BASE_MIB = 12  # a function's interpreter and handler besides its heap (measured: 12-13 MiB)
# The parent's DRAM is read this often: a call waits on memory for 50-200 ms,
# so at 0.5 s (sessions up to 56) the unused DRAM while calls waited rested
# on 1-3 samples a run.
DRAM_PERIOD_S = 0.1
ENGINE = mb.DockerEngine(os.environ.get("MEMEXT_ENGINE_DIR", "/var/tmp/memext-dockerd-faas"), PARENT)


def base_mode(mode):
    """A variant's mode (memext+reclaim=loop: memext)."""
    return mode.split("+", 1)[0]


def known_mode(mode):
    """A mode of MODES, or a variant (MODE+KEY=VALUE...) of a memext one."""
    if "+" not in mode:
        return mode in MODES
    if base_mode(mode) not in ("memext", "memext-idle"):
        return False
    try:
        mb.variant_tiers(mode)  # refuses a tiers key it does not know
        return bool(mb.variant(mode))
    except ValueError:
        return False


# `memext+daemon.foretold_calls=trace`: the daemon is told every call of the
# trace ahead (an analysis mode: memext's engine with perfect foresight,
# `daemon.foretold_calls`); `=timers`: the timer functions' calls alone (the
# others predicted as usual). Written to this file in the bench's work
# directory this long before the trace begins (the daemon reads it at its
# next tick).
FORETOLD = "foretold.json"
FORETELL_S = 2.5
FILL_MARGIN = 32 * MIB  # --fill memext: the parent this far under the cap before it is set
FORETOLD_CLASSES = {"trace": None, "timers": {"timer"}}


def foretold_path(daemon, work):
    """The daemon pairs of a variant with `foretold_calls = "trace"` (or
    "timers") made the path of the file the bench writes, that path and
    the classes told (None: all); (pairs, None, None) without."""
    told = [v.strip('"') for k, v in daemon if k == "foretold_calls"]
    if not told or told[0] not in FORETOLD_CLASSES:
        return daemon, None, None
    path = os.path.join(work, FORETOLD)
    pairs = [(k, f'"{path}"' if k == "foretold_calls" else v) for k, v in daemon]
    return pairs, path, FORETOLD_CLASSES[told[0]]


def foretold_calls(calls, cgroups, t0, classes=None, cls_of=None):
    """{cgroup: [epoch seconds of each of its calls]} from the trace's
    (t, function index) calls starting at epoch `t0`; with `classes`, only
    the functions whose class (`cls_of[i]`) is among them (pure)."""
    told = [classes is None or cls_of[i] in classes for i in range(len(cgroups))]
    out = {cg: [] for cg, t in zip(cgroups, told) if t}
    for t, i in calls:
        if told[i]:
            out[cgroups[i]].append(round(t0 + t, 6))
    return out


def read_back_bandwidth(tier, server, cleanup, mib):
    """The tier's bulk read-back bandwidth, MiB/s: `memext-e2e kbench` pages
    out `mib` MiB and times MADV_WILLNEED until the swap cache holds 95%."""
    mark = cleanup.mark()
    try:
        server.tiers_up(4 * mib * MIB, cleanup, tier)
        out = subprocess.run([os.path.join(mb.BIN, "memext-e2e"), "kbench", str(mib)],
                             capture_output=True, text=True, check=True).stdout
    finally:
        cleanup.run(mark)
    m = re.search(r"MADV_WILLNEED until swap cache holds 95%\s+(\d+) pages/s", out)
    if not m:
        raise RuntimeError(f"kbench printed no WILLNEED figure:\n{out}")
    return int(m.group(1)) * 4096 / MIB


CALLS_HEADER = ("function,class,t,latency_ms,handler_ms,error,majflt,minflt,"
                "late_ms,to_handler_ms,pre_majflt,pre_minflt,handler_cpu_ms,handler_wait_ms,preempted,pre_wait_ms\n")


def call_row(record, names, functions):
    """One line of calls-*.csv from a record of `host.replay`."""
    i, t, lat, h, err, majflt, minflt, late, to_handler, pre_majflt, pre_minflt, cpu, wait, preempted, pre_wait = record

    def opt(v, scale=None):
        return "" if v is None else f"{v * scale:.2f}" if scale else str(v)
    return (f"{names[i]},{functions[i]['cls']},{t:.3f},{lat * 1000:.2f},{opt(h)},{err or ''},{opt(majflt)},"
            f"{opt(minflt)},{opt(late, 1000)},{opt(to_handler, 1000)},{opt(pre_majflt)},{opt(pre_minflt)},"
            f"{opt(cpu)},{opt(wait)},{opt(preempted)},{opt(pre_wait)}\n")


def fill_by_memext(server, cap, deadline_s=300.0, clock=time.time, sleep=time.sleep):
    """--fill memext: waits until the parent's usage is under the cap
    (memext, told the cap as its capacity, pushing the functions out as they
    go idle), then sets the cap. Past the deadline the cap is set all the
    same (the kernel reclaims the rest at the write). Returns whether the
    parent got under the cap by itself."""
    t0 = clock()
    while (usage := server.usage()) > cap - FILL_MARGIN and clock() - t0 < deadline_s:
        sleep(1.0)
    under = usage <= cap - FILL_MARGIN
    log(f"    memext's fill: parent at {usage // MIB} MiB after {clock() - t0:.0f} s"
        f"{'' if under else ' (deadline: the cap reclaims the rest)'}; cap set")
    for _ in range(10):  # v1: EBUSY where the write could not reclaim down to it at once
        try:
            server.set_cap(cap)
            return under
        except OSError:
            sleep(1.0)
    server.set_cap(cap)
    return under


def run_mode(a, server, fleet_names, heaps, trace, tier, mode, rnd, bandwidth, cleanup):
    """One mode on one tier: set up, start the functions, settle, replay the
    trace, tear down. Returns (result row, DRAM series)."""
    mark = cleanup.mark()
    try:
        # --fill memext: the functions start under no cap, memext told the
        # cap as its capacity; the cap is set once memext has pushed the
        # parent under it (`fill_by_memext`).
        memext_fills = a.fill == "memext" and mode.startswith("memext")
        server.set_cap(None if mode == "ideal" or memext_fills else a.cap)
        kills0 = server.oom_kills()
        if mode != "ideal":
            server.tiers_up(a.swap, cleanup, tier, **mb.variant_tiers(mode))
        if mode == "zswap":
            srv.zswap_on(cleanup)
        controller, foretold = None, None
        if mode.startswith("memext"):
            push_out = "when-idle" if base_mode(mode) == "memext-idle" else "when-needed"
            extend, daemon = mb.variant_settings(mode)
            daemon, foretold, told_classes = foretold_path(daemon, a.work)
            cfg = mb.memext_config(a.work, PARENT, f"{ENGINE.dir}/root", (), a.idle_after, a.floor, push_out,
                                   a.admit_within, extend=extend, daemon=daemon,
                                   capacity=a.cap if memext_fills else None)
            controller = mb.start_daemon(cfg, os.path.join(a.out, f"{mode}-daemon-{tier}-r{rnd}.log"), cleanup).pid
        fleet = host.Fleet(ENGINE, a.work, fleet_names, heaps)
        t_start = time.time()
        # `limits`: each function's share from its creation on (a limit
        # lowered later, `docker update`, is refused by the kernel where it
        # cannot reclaim down to it at once: EBUSY, session 43).
        limits = host.static_limits([h + BASE_MIB for h in heaps], a.cap) if mode == "limits" else None
        fleet.start(cleanup, progress=lambda k, n: log(f"    {k}/{n} functions up ({time.time() - t_start:.0f} s)"),
                    limits=limits)
        if mode == "senpai":
            cgroups = [f"{PARENT}/{cid}" for cid in fleet.ids()]
            controller = srv.start_senpai(cgroups, a.senpai_args, os.path.join(a.out, f"senpai-{tier}-r{rnd}.log"),
                                          cleanup)
        if memext_fills:
            fill_by_memext(server, a.cap)
        time.sleep(a.settle)
        log(f"    replaying {len(trace.calls)} calls over {trace.params.seconds:.0f} s")
        sockets = [fleet.socket(n) for n in fleet_names]
        hits0 = server.cap_hits()
        with srv.Window(server, controller, period=DRAM_PERIOD_S) as w:
            t0 = time.time() + (FORETELL_S if foretold else 0.5)
            if foretold:
                cgroups = [f"{PARENT}/{cid}" for cid in fleet.ids()]
                with open(foretold + ".new", "w") as f:
                    json.dump(foretold_calls(trace.calls, cgroups, t0, told_classes,
                                             [f.cls for f in trace.functions]), f)
                os.replace(foretold + ".new", foretold)
            records = host.replay(trace.calls, sockets, t0, timeout=a.call_timeout)
        hits = None if hits0 is None or mode == "ideal" else server.cap_hits() - hits0
        if controller is not None:  # to read the controller's log against the calls
            with open(os.path.join(a.out, f"functions-{tier}-{mode}-r{rnd}.json"), "w") as f:
                json.dump({"trace_start_epoch": t0, "cgroups": {n: f"{PARENT}/{cid}" for n, cid in
                                                                zip(fleet_names, fleet.ids())}}, f, indent=1)
        functions = [dataclasses.asdict(f) for f in trace.functions]
        series = [(round(s + w.t0 - t0, 3), b) for s, b in w.series]  # seconds into the trace
        row = {"tier": tier if mode != "ideal" else "-", "mode": mode, "round": rnd, "cap_mib": a.cap // MIB,
               **results.latency(records, functions),
               **results.cold_limit(records, heaps, None if mode == "ideal" else bandwidth),
               **results.dram(series, records, None if mode == "ideal" else a.cap),
               **{k: w.result.get(k) for k in ("cpu_controller_s", "swapin_mib", "swapout_mib", "zswpin_mib",
                                               "host_steal_s", "host_irq_s")},
               "cap_hits": hits,
               "oom_kills": None if kills0 is None else server.oom_kills() - kills0 + functions_oom_kills(fleet)}
        deaths = fleet.deaths()
        row["deaths"] = len(deaths)
        if deaths:  # how each ended, to tell a kill from a crash (session 47 could not)
            with open(os.path.join(a.out, f"deaths-{row['tier']}-{mode}-r{rnd}.json"), "w") as f:
                json.dump(deaths, f, indent=1)
            log(f"    {len(deaths)} function(s) died: " + ", ".join(
                f"{d['name']} (exit {d['exit_code']}{', OOM-killed' if d['oom_killed'] else ''})" for d in deaths))
        with open(os.path.join(a.out, f"calls-{row['tier']}-{mode}-r{rnd}.csv"), "w") as f:
            f.write(CALLS_HEADER)
            for r in records:
                f.write(call_row(r, fleet_names, functions))
        return row, series
    finally:
        cleanup.run(mark)
        if foretold and os.path.exists(foretold):
            os.remove(foretold)


def functions_oom_kills(fleet):
    """Function containers the OOM killer ended (a limit of their own, as
    Senpai sets, kills there, not at the parent; the container then exits
    and its cgroup with its counters goes): Docker's record of each."""
    out = ENGINE.docker("inspect", "-f", "{{.State.OOMKilled}}", *fleet.names, check=False)
    return out.split().count("true")


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--functions", type=int, default=100, help="function containers (default 100)")
    ap.add_argument("--seconds", type=float, default=300.0, help="length of the trace (default 300)")
    ap.add_argument("--seed", type=int, default=1, help="the trace's and the heaps' seed (default 1)")
    ap.add_argument("--heap-mib", default="30,80", help="heap sizes MIN,MAX MiB, uniform (default 30,80)")
    ap.add_argument("--time-scale", type=float, default=1.0,
                    help="multiplies every gap of the trace (timer periods, mean inter-arrivals, burst gaps "
                         "and spacing): below 1 for a denser trace (default 1)")
    ap.add_argument("--cap-share", type=float, default=0.25,
                    help="the DRAM cap as a share of the functions' memory (default 0.25)")
    ap.add_argument("--tiers", default=",".join(TIERS), help="swapfile,zram (default both)")
    ap.add_argument("--modes", default="ideal,linux,zswap,senpai,memext,memext-idle",
                    help=f"from {','.join(MODES)} (default: all but limits); also variants of the memext modes, "
                         "MODE+KEY=VALUE[+...] with extend-class settings (memext+idle_after=5s) or daemon ones "
                         "(memext+daemon.reclaim=page-out)")
    ap.add_argument("--rounds", type=int, default=1, help="rounds of every mode (default 1)")
    ap.add_argument("--settle", type=float, default=30.0,
                    help="seconds between the last function up and the trace (default 30)")
    ap.add_argument("--idle-after", type=float, default=10.0, help="memext: seconds before a function is idle")
    ap.add_argument("--floor", default="1MiB",
                    help="memext: the extend class's floor (default 1MiB: 100 floors of 16 MiB held 94%% of "
                         "the cap in the first runs, and waking functions never fitted; 2 MiB against 4 kept "
                         "6-22 more calls warm a round in session 58; 1 MiB against 2, 2-26 more calls within "
                         "2x ideal in six rotated pairs of session 87, no function lost in its 9 runs)")
    ap.add_argument("--admit-within", default=None,
                    help="memext: the extend class's admit_within (default: memext's, 5s; 0s: no admission)")
    ap.add_argument("--senpai-args", default="--interval 2 --max-probe 0.05 --min-size 16777216",
                    help="senpai.py's parameters (bench/peers' default: sped up for minutes-long runs)")
    ap.add_argument("--fill", choices=("capped", "memext"), default="capped",
                    help="how the functions' memory first reaches the tier: capped (default: the cap set before "
                         "they start, the kernel reclaiming at it as they write their heaps) or memext (memext "
                         "modes only: they start under no cap, memext given the cap as its capacity pushes the "
                         "idle ones out itself, one at a time by address, and the cap is set once the parent is "
                         "under it)")
    ap.add_argument("--call-timeout", type=float, default=60.0, help="one call's deadline, s (default 60)")
    ap.add_argument("--kbench-mib", type=int, default=256, help="size of the read-back measurement (default 256)")
    ap.add_argument("--smoke", action="store_true", help="6 functions, a 20 s trace, half of their memory as the "
                    "cap (the test suite)")
    a = mb.parse_bench_args(ap, "faas", "cgroups, swap, zswap, a private Docker engine")
    if a.smoke:
        a.functions, a.seconds, a.heap_mib, a.settle, a.idle_after, a.kbench_mib = 6, 20.0, "20,30", 5.0, 3.0, 64
        a.cap_share, a.floor, a.time_scale = 0.5, "4MiB", 0.05
    try:
        lo, hi = (int(x) for x in a.heap_mib.split(","))
    except ValueError:
        ap.error("--heap-mib: MIN,MAX in MiB")
    a.tiers, a.modes = a.tiers.split(","), a.modes.split(",")
    if any(t not in TIERS for t in a.tiers) or any(not known_mode(m) for m in a.modes):
        ap.error(f"--tiers from {','.join(TIERS)}; --modes from {','.join(MODES)}")
    if not 1 <= lo <= hi <= 4096 or not 0 < a.cap_share <= 1 or a.functions < 1 or a.rounds < 1 \
            or not a.time_scale > 0:
        ap.error("--heap-mib 1 <= MIN <= MAX <= 4096, 0 < --cap-share <= 1, --functions >= 1, --rounds >= 1, "
                 "--time-scale > 0")
    a.heap_range = (lo, hi)
    a.senpai_args = a.senpai_args.split()
    return a


def runs_of(a):
    """(tier, mode) pairs of a round: ideal once, the other modes on every
    tier (zswap only in front of the swap file)."""
    runs = [("-", "ideal")] if "ideal" in a.modes else []
    for tier in a.tiers:
        runs += [(tier, m) for m in a.modes if m != "ideal" and not (m == "zswap" and tier != "swapfile")]
    return runs


def main(argv=None):
    a = parse(argv)
    d, k = tr.Params(), a.time_scale
    params = tr.Params(functions=a.functions, seconds=a.seconds, seed=a.seed, timer_min=d.timer_min * k,
                       timer_max=d.timer_max * k, poisson_min=d.poisson_min * k, poisson_max=d.poisson_max * k,
                       burst_gap_min=d.burst_gap_min * k, burst_gap_max=d.burst_gap_max * k,
                       burst_spacing=d.burst_spacing * k)
    trace = tr.generate(params)
    heaps = host.heap_sizes(a.functions, *a.heap_range, a.seed)
    a.cap = int(a.cap_share * sum(h + BASE_MIB for h in heaps)) * MIB
    a.swap = max(2 << 30, 2 * sum(h + BASE_MIB for h in heaps) * MIB)
    names = [f.name for f in trace.functions]
    cleanup, a.work = mb.bench_workspace("faas", a)
    runs = runs_of(a)
    log(f"faas: {a.functions} functions, heaps {sum(heaps)} MiB, cap {a.cap // MIB} MiB; {len(trace.calls)} calls "
        f"in {a.seconds:.0f} s; {len(runs)} runs x {a.rounds} round(s)")
    mb.write_json(os.path.join(a.out, "params.json"),
                  {"params": {k: v for k, v in vars(a).items() if k != "work"}, "trace": dataclasses.asdict(params),
                   "trace_summary": tr.summary(trace), "heaps_mib": heaps, "machine": mb.machine_facts()})
    rows, series, bandwidth, failed, t_start = [], {}, {}, [], time.time()
    try:
        server = srv.Server(a.work, cleanup, PARENT)
        server.set_cap(None)
        for tier in a.tiers:
            bandwidth[tier] = read_back_bandwidth(tier, server, cleanup, a.kbench_mib)
            log(f"{tier}: bulk read-back {bandwidth[tier]:.0f} MiB/s (a {max(heaps)} MiB heap: "
                f"{max(heaps) / bandwidth[tier] * 1000:.0f} ms)")
        log("starting the private Docker engine")
        ENGINE.start(cleanup)
        total = len(runs) * a.rounds
        for rnd in range(a.rounds):
            k = rnd % len(runs)
            for n, (tier, mode) in enumerate(runs[k:] + runs[:k]):
                done = rnd * len(runs) + n
                eta = (time.time() - t_start) / done * (total - done) if done else 0
                log(f"[{done + 1}/{total}] {mode}" + (f" on {tier}" if mode != "ideal" else "")
                    + (f" (about {eta / 60:.0f} min left)" if eta else ""))
                try:
                    row, s = run_mode(a, server, names, heaps, trace, tier, mode, rnd, bandwidth.get(tier), cleanup)
                except RuntimeError as e:
                    # A mode that could not run (its controller failed to start,
                    # a function never came up) is a result too; the run goes on.
                    log(f"    FAILED: {e}")
                    failed.append(f"{mode} on {tier}, round {rnd + 1}: {e}")
                    continue
                rows.append(row)
                series[f"{row['tier'] if mode != 'ideal' else 'ideal'}/{mode}-r{rnd}"] = s
                log(f"    p50 {row['p50_ms']} ms, p99 {row['p99_ms']} ms, DRAM mean {row['dram_mean_mib']} MiB, "
                    f"unused while waiting {row['unused_while_waiting_mib']} MiB ({row['waiting_samples']} samples), errors {row['errors']}, "
                    f"cap hits {row['cap_hits']}, OOM kills {row['oom_kills']}")
                mb.write_json(os.path.join(a.out, "results.json"),
                              {"rows": rows, "bandwidth_mib_s": bandwidth, "failed": failed})
                results.write(a.out, rows, series)  # a cut run keeps what it measured
    finally:
        cleanup.run()
    print(results.write(a.out, rows, series))
    for f in failed:
        print(f"FAILED: {f}")
    log(f"results in {a.out} ({(time.time() - t_start) / 60:.1f} min)")
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
