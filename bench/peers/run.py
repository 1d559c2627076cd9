#!/usr/bin/env python3
"""bench/peers: memext against what operators deploy instead, in a matrix of
scenarios, every mode side by side in one invocation.

A server is a parent cgroup (/memext-peers) with a DRAM cap (--cap) and a swap
file behind it (--swap), real containers of a private Docker engine in it. A
cell is a critical workload and a noise kind:

  critical  redis     Redis over its whole keyspace (anonymous memory), --clients
                      clients GETting random keys, every latency recorded;
            postgres  PostgreSQL 15 driven by pgbench's select-only script over a
                      dataset of about a quarter of the cap (table, index, shared
                      buffers and page cache), every transaction's latency from
                      pgbench's own log. PostgreSQL rather than MariaDB: pgbench
                      ships with it, is the standard client for it and logs every
                      transaction; sysbench reports only aggregates.
  noise     fetch     Redis blob caches fetched whole by one serial client (the
                      paper's noise); service: fetch latency;
            burst     containers that sleep and then re-touch their whole heap,
                      a third each on a cron schedule, with jitter, Poisson;
                      service: the wake's touch time;
            grow      batch jobs that allocate up to a peak over --grow-phases'
                      ramp, work on it, free it and start again; service: job time.
  The noise's total memory is --noise-total (default 2x the cap).

Modes (rotated between cells and rounds: this VM drifts):
  ideal   no cap, no swap area;
  oracle  cap + swap file, and each burst container pages its own heap out
          (MADV_PAGEOUT) the moment its fill and each touch end: a bound, not
          a peer: a controller that knew the instant every sleep starts and
          paid only the kernel's cheapest page-out and the swap-in faults
          (burst noise only; not in the default modes);
  oracle-split  the oracle, with the noise in a cgroup of its own capped at the
          cap less the critical container's usage when it started and 64 MiB
          of headroom: the critical workload's memory untouched. A bound on what any memory
          controller gives the critical workload while serving the noise this
          cheaply: what is lost here is CPU and interference, not memory
          (--oracle-cpu-shares sets the noise's CPU weight in both oracles;
          --oracle-willneed has their noise read its heap back in bulk at
          each wake, the cheapest swap-in, instead of faulting it in;
          --oracle-serial serves their noise's wakes one at a time, each
          wake's time counted from when it was due);
  split   the same split with no oracle: the noise left to the kernel's
          reclaim in its own group (any noise kind; a reference, not a bound);
          --split-cpu-max caps the CPU of the noise's group in both splits
          (CFS bandwidth: at most that many CPUs, page faults and direct
          reclaim included); --split-cpus keeps the noise on those CPUs
          (docker --cpuset-cpus), its TLB shootdowns with it;
  linux   cap + swap file, nothing else;
  limits  + each noise container a static limit of its fair share of what the
          critical container leaves (docker update --memory, swap unlimited);
  zswap   + the kernel's zswap (lzo-rle, pool 20%) in front of the swap file;
  senpai  + bench/peers/senpai.py (Meta's Senpai, PSI-driven) on every noise container;
  memext  + `memext daemon`, the critical container critical, the noise extend.
In every mode with a swap area this machine's own DAMON reclaimer (kdamond.0,
pageout of memory idle 60 s) is active too: "linux" here is Linux plus DAMON.

Each mode: start the controller, the critical workload, the noise; warm up for
--warmup s (the critical load runs, the noise runs its schedule); measure for
--seconds s. Writes per cell CELL/results.csv (one row per mode and round),
CELL/histograms/ (PostgreSQL: also MODE-rROUND-timeline.csv, its transactions per
0.1 s, for tailattr.py), CELL/noise-MODE-rROUND.log, CELL.png; summary.csv,
summary.md, params.json. Everything it starts is removed afterwards, also on Ctrl-C."""
import argparse
import contextlib
import os
import re
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import memextbench as mb  # noqa: E402
from memextbench import Cleanup, log, size  # noqa: E402
import cpuprofile  # noqa: E402
import report  # noqa: E402
import server as srv  # noqa: E402
import workloads as wl  # noqa: E402

MODES = ["ideal", "oracle", "oracle-split", "split", "linux", "limits", "zswap", "senpai", "memext"]
DEFAULT_MODES = [m for m in MODES if not m.startswith("oracle") and m != "split"]
CRITICALS = {"redis": wl.RedisCritical, "postgres": wl.PostgresCritical}
NOISES = ["fetch", "burst", "grow"]
ENGINE = mb.DockerEngine(os.environ.get("MEMEXT_ENGINE_DIR", "/var/tmp/memext-dockerd-peers"), srv.PARENT,
                         image="memext-peers:bookworm-1", packages="python3,redis-server,redis-tools,procps,postgresql")
MIB = 1 << 20
NOISE_GROUP = "noise"  # oracle-split, split: the noise's own parent, under the server's
SPLIT_HEADROOM = 64 * MIB  # oracle-split, split: left to the critical container beyond its usage at start


def run_mode(a, server, cell, mode, rnd, cleanup):
    """One mode in one cell: set up, warm up, measure, tear down. A result row."""
    workload, noise_kind = cell
    mark = cleanup.mark()
    try:
        server.set_cap(None if mode == "ideal" else a.cap)
        if mode != "ideal":
            server.tiers_up(a.swap, cleanup, **mb.variant_tiers(mode))
        if mode == "zswap":
            srv.zswap_on(cleanup)
        controller = None
        if report.is_memext(mode):
            extend, daemon = mb.variant_settings(mode)
            cfg = mb.memext_config(a.work, srv.PARENT, f"{ENGINE.dir}/root", [wl.CRITICAL], a.idle_after,
                                   extend=extend, daemon=daemon)
            controller = mb.start_daemon(cfg, os.path.join(a.out, "memext-daemon.log"), cleanup).pid
        critical = CRITICALS[workload](a, a.work, srv.in_client(cleanup))
        critical.start(ENGINE, cleanup)
        oracle = mode.startswith("oracle")
        after = ("pageout-willneed" if a.oracle_willneed else "pageout") if oracle else "keep"
        noise = wl.Noise(a, a.work, noise_kind, after=after, serial=oracle and a.oracle_serial)
        noise.start(ENGINE, cleanup, noise_args(a, mode, cleanup))
        if mode == "limits":
            used = critical_usage()
            share = limit_share(a.cap, used, noise.n)
            for name in noise.names():
                ENGINE.docker("update", "--memory", str(share), "--memory-swap", "-1", name)
            log(f"    limits: {noise.n} noise containers at {share // MIB} MiB each (the critical one uses {used // MIB} MiB)")
        if mode == "senpai":
            cgroups = [f"{srv.PARENT}/{ENGINE.docker('inspect', '-f', '{{.Id}}', n)}" for n in noise.names()]
            controller = srv.start_senpai(cgroups, a.senpai_args, os.path.join(a.out, "senpai.log"), cleanup)
        try:
            critical.warm(a.warmup)
            hist = os.path.join(a.out, f"{workload}-{noise_kind}", "histograms", f"{mode}-r{rnd}.csv")
            cid = ENGINE.docker("inspect", "-f", "{{.Id}}", wl.CRITICAL)
            with srv.Window(server, controller, f"{srv.PARENT}/{cid}") as w, cpu_profile(a, hist, controller, cid):
                crit = critical.measure(a.seconds, hist)
        except RuntimeError as e:
            # The critical workload failed (e.g. OOM-killed under the cap): a
            # result of the mode, recorded as such; the matrix goes on.
            reason = f"{failure_cause()}: {str(e)[:160]}"
            log(f"    FAILED: {reason}")
            return {**dict.fromkeys(report.COLUMNS), "mode": mode, "round": rnd, "throughput": 0.0, "requests": 0,
                    "failed": reason, "oom_kills": server.oom_kills()}
        ops = noise.ops(w.result["window_start"], w.result["window_start"] + w.result["window_s"])
        with open(os.path.join(a.out, f"{workload}-{noise_kind}", f"noise-{mode}-r{rnd}.log"), "w") as f:
            f.write(noise.raw())
        return {"mode": mode, "round": rnd, **crit, **report.noise_service(ops), **w.result,
                "oom_kills": server.oom_kills(), "failed": ""}
    finally:
        cleanup.run(mark)


def noise_args(a, mode, cleanup):
    """The noise containers' docker arguments: in the oracles their CPU
    weight (--oracle-cpu-shares); in oracle-split and split a parent of
    their own capped at what the critical container leaves (made here,
    removed by `cleanup` after them)."""
    oracle = mode.startswith("oracle")
    args = ["--cpu-shares", str(a.oracle_cpu_shares)] if a.oracle_cpu_shares and oracle else []
    if mode in ("oracle-split", "split"):
        group = f"{srv.PARENT}/{NOISE_GROUP}"
        mb.make_cgroup(group, cleanup)
        room = max(64 * MIB, a.cap - critical_usage() - SPLIT_HEADROOM) & ~4095
        knob = "memory.limit_in_bytes" if mb.V1 else "memory.max"
        srv.write(f"{mb.CG}/memory{group}/{knob}" if mb.V1 else f"{mb.CG}{group}/{knob}", room)
        log(f"    {mode}: the noise capped at {room // MIB} MiB in {group}")
        if a.split_cpu_max:
            write_cpu_max(group, a.split_cpu_max)
            log(f"    {mode}: the noise's CPU capped at {a.split_cpu_max:g} CPUs")
        if a.split_cpus:
            args += ["--cpuset-cpus", a.split_cpus]
            log(f"    {mode}: the noise on CPUs {a.split_cpus}")
        args += ["--cgroup-parent", group]
    return args


CPU_PERIOD_US = 100_000  # the kernel's default CFS period


def cpu_quota_us(cpus):
    """CFS bandwidth for `cpus` CPUs per default period (at least the kernel's 1 ms)."""
    return max(1000, round(cpus * CPU_PERIOD_US))


def write_cpu_max(group, cpus):
    """Caps `group`'s CPU at `cpus` CPUs (v1 cpu.cfs_quota_us, v2 cpu.max);
    the group is removed after the mode, and its limit with it."""
    quota = cpu_quota_us(cpus)
    if mb.V1:
        srv.write(f"{mb.CG}/cpu{group}/cpu.cfs_period_us", CPU_PERIOD_US)
        srv.write(f"{mb.CG}/cpu{group}/cpu.cfs_quota_us", quota)
    else:
        srv.write(f"{mb.CG}{group}/cpu.max", f"{quota} {CPU_PERIOD_US}")


def cpu_profile(a, hist, controller, cid):
    """With --cpu-profile, the window's CPU by who and what (cpuprofile.py)."""
    if not a.cpu_profile:
        return contextlib.nullcontext()
    roles = {"pids": {controller: "controller"} if controller else {},
             "cgroups": [(f"{srv.PARENT}/{cid}", "critical"), (srv.PARENT, "noise"), (srv.CLIENT, "client")]}
    return cpuprofile.Profile(hist[:-len(".csv")] + "-cpu.json", roles)


def failure_cause():
    """Why the critical container stopped serving: OOM-killed, exited, or running."""
    state = ENGINE.docker("inspect", "-f", "{{.State.OOMKilled}} {{.State.Status}} {{.State.ExitCode}}",
                          wl.CRITICAL, check=False).split()
    if not state:
        return "critical container gone"
    if state[0] == "true":
        return "critical container OOM-killed"
    return f"critical container {state[1]} (exit {state[2]})"


def critical_usage():
    """The critical container's footprint, in DRAM and swap (the noise's fill may
    have pushed part of it out): what an operator sizes the others' limits by."""
    cid = ENGINE.docker("inspect", "-f", "{{.Id}}", wl.CRITICAL)
    if mb.V1:
        return int(srv.read(f"{mb.CG}/memory{srv.PARENT}/{cid}/memory.memsw.usage_in_bytes"))
    d = f"{mb.CG}{srv.PARENT}/{cid}"
    return int(srv.read(f"{d}/memory.current")) + int(srv.read(f"{d}/memory.swap.current"))


def limit_share(cap, critical, n):
    """A noise container's static limit: its fair share of what the critical one leaves."""
    return max(16 * MIB, (cap - critical) // n) & ~4095


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cap", default="2G", help="the server's DRAM: the parent cgroup's cap (default 2G)")
    ap.add_argument("--swap", default="12G", help="swap file behind it (default 12G)")
    ap.add_argument("--dataset", help="the critical dataset (default a quarter of --cap)")
    ap.add_argument("--value-size", type=int, default=1024, help="Redis: bytes per value (default 1024)")
    ap.add_argument("--shared-buffers", default="128M", help="PostgreSQL shared_buffers (default 128M, its default)")
    ap.add_argument("--clients", type=int, default=8, help="critical clients (default 8)")
    ap.add_argument("--noise-total", help="the noise's memory in total (default 2x --cap)")
    ap.add_argument("--noise-containers", type=int, default=12, help="noise containers (default 12)")
    ap.add_argument("--blobs", default="2.5M:32,10M:6,25M:5", help="fetch: blob mix SIZE:COUNT,... scaled to each container")
    ap.add_argument("--pause-us", type=int, default=150, help="fetch: client pause between fetches (us)")
    ap.add_argument("--noise-heap", default="private", choices=["private", "shared"],
                    help="burst and grow: the noise's heap as private anonymous memory (default, as a program's heap) "
                         "or a shared anonymous mapping (shmem, as a database's shared buffers)")
    ap.add_argument("--burst-period", default="20,40", help="burst: wake periods from MIN to MAX seconds")
    ap.add_argument("--grow-phases", default="20,10,5", help="grow: RAMP,WORK,PAUSE seconds")
    ap.add_argument("--warmup", type=float, default=30.0, help="seconds before measuring (default 30)")
    ap.add_argument("--seconds", type=float, default=45.0, help="measurement window (default 45)")
    ap.add_argument("--rounds", type=int, default=1, help="rounds of every cell (default 1)")
    ap.add_argument("--idle-after", type=float, default=10.0, help="memext: seconds before an extend context is idle")
    ap.add_argument("--senpai-args", default="--interval 2 --max-probe 0.05 --min-size 16777216",
                    help="senpai.py's parameters (default: sped up for minute-long cells; published: interval 6, "
                         "max-probe 0.01, min-size 100 MiB)")
    ap.add_argument("--modes", default=",".join(DEFAULT_MODES),
                    help="modes, from " + ", ".join(MODES) + "; also memext variants memext+KEY=VALUE[+...] "
                         "with extend-class settings (e.g. memext+wake_cpu_weight=20) or daemon ones "
                         "(memext+daemon.reclaim=loop), run beside memext")
    ap.add_argument("--oracle-cpu-shares", type=int, metavar="N",
                    help="the oracles' noise containers at CPU weight N (docker --cpu-shares, 2-262144; default the "
                         "engine's, 1024)")
    ap.add_argument("--oracle-willneed", action="store_true",
                    help="the oracles' noise also reads its heap back in bulk (MADV_WILLNEED) at each wake before "
                         "touching it: the cheapest swap-in (swapin_cost.py), not the touch's faults")
    ap.add_argument("--oracle-serial", action="store_true",
                    help="the oracles' noise wakes one at a time (a lock the burst containers share; a wake's time "
                         "counts from when it was due): admission in order, as a bound")
    ap.add_argument("--split-cpu-max", type=float, metavar="CPUS",
                    help="oracle-split and split: the noise's group may use at most CPUS CPUs (0.01-64; CFS bandwidth, "
                         "its page faults and reclaim included; default no cap)")
    ap.add_argument("--split-cpus", metavar="LIST",
                    help="oracle-split and split: the noise runs only on these CPUs (e.g. 1 or 0-1,3; docker "
                         "--cpuset-cpus); default any")
    ap.add_argument("--critical", default=",".join(CRITICALS), help="critical workloads: redis,postgres")
    ap.add_argument("--noise", default=",".join(NOISES), help="noise kinds: fetch,burst,grow")
    mb.add_profile_arg(ap)
    ap.add_argument("--cpu-profile", action="store_true",
                    help="sample every CPU during each window (perf record) and write who used it doing what: "
                         "histograms/MODE-rN-cpu.txt and .json (cpuprofile.py; needs linux-perf)")
    ap.add_argument("--quick", action="store_true", help="smaller server, short windows (under 20 min)")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, seconds-long windows (the test suite)")
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "peers-" + time.strftime("%Y%m%d-%H%M%S")))
    ap.add_argument("--replot", metavar="DIR", help="only redo the plots and the summary from DIR's CSVs")
    a = ap.parse_args(argv)
    if a.replot:
        return a
    if a.quick:
        a.cap, a.swap, a.noise_containers, a.warmup, a.seconds = "512M", "3G", 6, 10.0, 12.0
        a.burst_period, a.grow_phases, a.idle_after = "6,12", "6,3,2", 4.0
    if a.smoke:
        a.cap, a.swap, a.noise_containers, a.warmup, a.seconds = "256M", "1G", 3, 4.0, 4.0
        a.burst_period, a.grow_phases, a.idle_after, a.blobs = "2,3", "2,1,1", 2.0, "1M:4,4M:1"
    a.cap, a.swap = size(a.cap), size(a.swap)
    a.dataset = size(a.dataset) if a.dataset else a.cap // 4
    a.shared_buffers = size(a.shared_buffers)
    a.noise_total = size(a.noise_total) if a.noise_total else 2 * a.cap
    a.blobs = [(size(b.split(":")[0]), int(b.split(":")[1])) for b in a.blobs.split(",")]
    a.burst_period = [float(x) for x in a.burst_period.split(",")]
    a.grow_phases = [float(x) for x in a.grow_phases.split(",")]
    a.senpai_args = a.senpai_args.split()
    for name, allowed in (("modes", MODES), ("critical", list(CRITICALS)), ("noise", NOISES)):
        picked = [x for x in getattr(a, name).split(",") if x]
        if not picked or any(x not in allowed and not (name == "modes" and x.startswith("memext+")) for x in picked):
            ap.error(f"--{name}: choose from {', '.join(allowed)}")
        setattr(a, name, picked)
    if len(a.burst_period) != 2 or len(a.grow_phases) != 3 or a.noise_containers < 1:
        ap.error("--burst-period MIN,MAX; --grow-phases RAMP,WORK,PAUSE; --noise-containers >= 1")
    if any(m.startswith("oracle") for m in a.modes) and a.noise != ["burst"]:
        ap.error("--modes oracle, oracle-split: only the burst noise knows when it sleeps (--noise burst)")
    if a.oracle_cpu_shares is not None and not 2 <= a.oracle_cpu_shares <= 262144:
        ap.error("--oracle-cpu-shares: 2-262144")
    if a.split_cpu_max is not None and not 0.01 <= a.split_cpu_max <= 64:
        ap.error("--split-cpu-max: 0.01-64 CPUs")
    if a.split_cpus is not None and not re.fullmatch(r"\d+(-\d+)?(,\d+(-\d+)?)*", a.split_cpus):
        ap.error("--split-cpus: a CPU list such as 1 or 0-1,3")
    splits = any(m in ("oracle-split", "split") for m in a.modes)
    if (a.split_cpu_max is not None or a.split_cpus is not None) and not splits:
        ap.error("--split-cpu-max, --split-cpus: only the modes oracle-split and split have the noise's own group")
    if a.oracle_serial and not any(m.startswith("oracle") for m in a.modes):
        ap.error("--oracle-serial: only the oracles' noise (--modes oracle, oracle-split)")
    if a.cpu_profile and not shutil.which("perf"):
        ap.error("--cpu-profile needs perf (Debian package linux-perf)")
    if os.geteuid() != 0:
        ap.error("needs root (cgroups, swap, zswap, a private Docker engine)")
    return a


def main(argv=None):
    a = parse(argv)
    if a.replot:
        report.replot(a.replot)
        return
    cells = [(c, n) for c in a.critical for n in a.noise]
    for c, n in cells:
        os.makedirs(os.path.join(a.out, f"{c}-{n}", "histograms"), exist_ok=True)
    log(f"server: cap {a.cap // MIB} MiB, swap {a.swap // MIB} MiB; critical dataset {a.dataset // MIB} MiB; "
        f"noise {a.noise_total // MIB} MiB in {a.noise_containers} containers; {len(cells)} cells x "
        f"{len(a.modes)} modes x {a.rounds} round(s)")
    params = {k: v for k, v in vars(a).items() if k != "work"}
    machine = {**mb.machine_facts(), "postgres": "15 (Debian bookworm)"}
    mb.write_json(os.path.join(a.out, "params.json"), {"params": params, "machine": machine})  # --replot of a cut run
    cleanup = Cleanup()
    rows = {cell: [] for cell in cells}
    a.work = f"/var/tmp/memext-peers-{os.getpid()}"
    os.makedirs(a.work, exist_ok=True)
    cleanup.push(f"remove {a.work}", lambda: shutil.rmtree(a.work, ignore_errors=True))
    total, done, t_start = len(cells) * len(a.modes) * a.rounds, 0, time.time()
    try:
        mb.use_build(a.profile)
        log("starting the private Docker engine")
        ENGINE.start(cleanup)
        server = srv.Server(a.work, cleanup)
        for rnd in range(a.rounds):
            for ci, cell in enumerate(cells):
                k = (ci + rnd) % len(a.modes)
                for mode in a.modes[k:] + a.modes[:k]:
                    done += 1
                    eta = (time.time() - t_start) / max(1, done - 1) * (total - done + 1) if done > 1 else 0
                    log(f"[{done}/{total}] {cell[0]} x {cell[1]}, {mode}, round {rnd + 1}"
                        + (f" (about {eta / 60:.0f} min left)" if eta else ""))
                    row = run_mode(a, server, cell, mode, rnd, cleanup)
                    rows[cell].append(row)
                    log("    " + report.one_line(row))
                report.write_cell(a.out, cell, rows[cell])
    finally:
        cleanup.run()
    report.write_summary(a.out, rows, params, machine)
    log(f"results in {a.out} ({(time.time() - t_start) / 60:.1f} min)")


if __name__ == "__main__":
    main()
