#!/usr/bin/env python3
"""bench/imdt: HPC jobs per hour with memory extension, the experiment of
imdt-for-containers-tr.txt at this machine's scale.

A job is an OpenFOAM mesh refinement and decomposition in a Docker container
(bench/imdt/job.sh: snappyHexMesh, decomposePar, then checkMesh must pass; Debian's
OpenFOAM 1912, the windAroundBuildings case with its background mesh scaled by
--scale). All jobs run under one parent cgroup whose memory cap (--cap) stands in
for the server's DRAM. n jobs start together; a batch ends when the last one has.

Setups, each swept n = 1, 2, 3, ...:
  dram      the cap and no swap at all (the cgroup may not swap either); the sweep
            stops after the first batch in which a job failed (it ran out of memory).
  extended  the same cap, plus memext's tiers -- a zram device (--zram, its pool held
            to --zram-mem-limit of host DRAM) and a swap file, together (--extend - 1)
            times the cap -- and `memext daemon` with every job in class extend. The
            sweep goes up to what the extended memory holds (total / a job's measured
            peak, or --max-jobs).
A job counts only if it exited 0 and checkMesh passed. Throughput as in the report:
jobs/hour = jobs that succeeded x 3600 / their average runtime.

Writes to --out: dram.csv and extended.csv in the report's layout (containers, avg
job runtime [s], throughput [jobs/hour]), jobs.csv (every job: runtime, outcome,
peak memory, phase times), batches.csv (DRAM and swap in use per batch), params.json
(every parameter, the machine's facts, the measured peak), summary.txt (the targets)
and jobs-per-hour.png. Cleans up every container, cgroup, swap device and daemon it
started, also when interrupted."""
import argparse
import calendar
import csv
import math
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import memextbench as mb  # noqa: E402
from memextbench import Cleanup, log, size  # noqa: E402

PARENT = "/memext-imdt"
ENGINE = mb.DockerEngine(os.environ.get("MEMEXT_ENGINE_DIR", "/var/tmp/memext-dockerd-imdt"), PARENT,
                         image="memext-openfoam:bookworm-2", packages="openfoam,openfoam-examples,procps,time")
docker = ENGINE.docker
SETUPS = ["dram", "extended"]
TABLE = ["containers", "avg job runtime [s]", "throughput [jobs/hour]"]
MIB = 1 << 20


def cg_file(name):
    """A memory knob of the server cgroup (v1 or v2 name)."""
    if mb.V1:
        return f"{mb.CG}/memory{PARENT}/{name}"
    return f"{mb.CG}{PARENT}/{name}"


def read_int(path, default=0):
    try:
        with open(path) as f:
            v = f.read().strip()
        return default if v == "max" else int(v)
    except (OSError, ValueError):
        return default


def write(path, value):
    with open(path, "w") as f:
        f.write(str(value))


def docker_time(stamp):
    """Seconds since the epoch of a Docker timestamp (RFC 3339, nanoseconds, Z)."""
    main, _, frac = stamp.rstrip("Z").partition(".")
    t = calendar.timegm(time.strptime(main, "%Y-%m-%dT%H:%M:%S"))
    return t + (float("0." + frac) if frac else 0.0)


def parse_job_log(text):
    """Phase times, per-phase peaks (KiB) and the mesh's cells from job.sh's output."""
    phases, peaks, cells = {}, {}, None
    for line in text.splitlines():
        w = line.split()
        if len(w) == 3 and w[0] == "phase" and w[2] != "failed":
            phases[w[1]] = float(w[2])
        elif len(w) == 3 and w[0] == "peak_kib":
            peaks[w[1]] = int(w[2])
        elif line.startswith("mesh ok "):
            cells = int(w[2])
    return phases, peaks, cells


class Run:
    def __init__(self, a, cleanup):
        self.a, self.cleanup = a, cleanup
        self.work = f"/var/tmp/memext-imdt-{os.getpid()}"
        os.makedirs(self.work, exist_ok=True)
        cleanup.push(f"remove {self.work}", lambda: shutil.rmtree(self.work, ignore_errors=True))
        self.job_sh = os.path.join(HERE, "job.sh")
        self.swap_tiers = None

    def server(self, setup):
        """The parent cgroup capped at --cap; for dram, with swap forbidden."""
        if not os.path.isdir(os.path.dirname(cg_file("x"))):
            mb.make_cgroup(PARENT, self.cleanup)
        a = self.a
        if mb.V1:
            memsw = cg_file("memory.memsw.limit_in_bytes")
            if setup == "dram":
                write(cg_file("memory.limit_in_bytes"), a.cap)
                if os.path.exists(memsw):
                    write(memsw, a.cap)
                else:
                    write(cg_file("memory.swappiness"), 0)
            else:
                if os.path.exists(memsw):
                    write(memsw, -1)
                else:
                    write(cg_file("memory.swappiness"), 60)
                write(cg_file("memory.limit_in_bytes"), a.cap)
        else:
            write(cg_file("memory.max"), a.cap)
            write(cg_file("memory.swap.max"), 0 if setup == "dram" else "max")

    def start_tiers(self):
        a = self.a
        cfg = os.path.join(self.work, "tiers.toml")
        with open(cfg, "w") as f:
            f.write(f'[host]\nstate_dir = "{self.work}/tstate"\n\n'
                    f'[tiers.zram]\nsize = "{a.zram // MIB}MiB"\nmem_limit = "{a.zram_mem_limit // MIB}MiB"\n\n'
                    f'[[tiers.swapfile]]\npath = "{self.work}/swap0"\nsize = "{a.swapfile // MIB}MiB"\npriority = 50\n')
        r = mb.memext(["--config", cfg, "tiers", "up"], capture_output=True, text=True)
        self.cleanup.push("tiers down", lambda: mb.memext(["--config", cfg, "tiers", "down"], capture_output=True))
        if r.returncode != 0:
            raise RuntimeError(f"memext tiers up: {r.stderr.strip()}")
        self.swap_tiers = cfg

    def zram_stat(self):
        """zram's mm_stat of memext's device: (original, compressed, pool max) bytes."""
        for line in open("/proc/swaps").read().splitlines()[1:]:
            dev = line.split()[0]
            if dev.startswith("/dev/zram") and dev != "/dev/zram0":
                w = open(f"/sys/block/{dev[5:]}/mm_stat").read().split()
                return int(w[0]), int(w[1]), int(w[4])
        return 0, 0, 0

    def start_daemon(self):
        cfg = os.path.join(self.work, "memext.toml")
        with open(cfg, "w") as f:
            f.write(f'[host]\nstate_dir = "{self.work}/dstate"\n\n'
                    f'[[select]]\ncgroup = "{PARENT}/*"\nclass = "extend"\n\n'
                    f'[runtimes]\ndocker_roots = ["{ENGINE.dir}/root"]\n\n'
                    f'[daemon]\ncapacity_cgroup = "{PARENT}"\ntick = "1s"\n'
                    f'socket = "{self.work}/memext.sock"\n')
        return mb.start_daemon(cfg, os.path.join(self.a.out, "memext-daemon.log"), self.cleanup)

    def batch(self, setup, n):
        """Starts n jobs at once, waits for all, and returns each job's record."""
        a = self.a
        names = [f"imdt-{setup}-{n}-{i}" for i in range(n)]
        for name in names:
            docker("rm", "-f", name, check=False)
            self.cleanup.push(f"container {name}", lambda name=name: docker("rm", "-f", name, check=False))
        if mb.V1:
            write(cg_file("memory.max_usage_in_bytes"), 0)
        for name in names:
            docker("run", "-d", "--name", name, "--network", "none", "-v", f"{self.job_sh}:/job.sh:ro",
                   ENGINE.IMAGE, "/job.sh", str(a.scale))
        usage_file = cg_file("memory.usage_in_bytes" if mb.V1 else "memory.current")
        swap_file = cg_file("memory.memsw.usage_in_bytes" if mb.V1 else "memory.swap.current")
        t0, last, swap_peak, running = time.time(), 0.0, 0, n
        while running:
            time.sleep(1)
            if time.time() - t0 > a.timeout:
                log(f"  {setup} n={n}: still running after {a.timeout:.0f} s (--timeout); stopping the batch")
                for name in names:
                    docker("kill", name, check=False)
            states = docker("inspect", "-f", "{{.State.Running}}", *names).split()
            running = states.count("true")
            usage = read_int(usage_file)
            swapped = read_int(swap_file) - usage if mb.V1 else read_int(swap_file)
            swap_peak = max(swap_peak, swapped)
            if time.time() - last >= a.progress:
                last = time.time()
                log(f"  {setup} n={n}: {time.time() - t0:5.0f} s, {running} of {n} running, "
                    f"DRAM {usage / MIB:,.0f} MiB, swap {max(swapped, 0) / MIB:,.0f} MiB")
        jobs = []
        for i, name in enumerate(names):
            # (Docker's OOMKilled flag is not used: it is set on every container
            # under a parent that hit its cap, including those that survived.)
            state = docker("inspect", "-f", "{{.State.ExitCode}} {{.State.StartedAt}} {{.State.FinishedAt}}",
                           name).split()
            out = subprocess.run([*ENGINE.cli, "logs", name], capture_output=True, text=True).stdout
            phases, peaks, cells = parse_job_log(out)
            code = int(state[0])
            ok = code == 0 and cells is not None
            jobs.append({"setup": setup, "containers": n, "job": i, "ok": ok, "exit_code": code,
                         "runtime_s": round(docker_time(state[2]) - docker_time(state[1]), 3),
                         "peak_mib": round(max(peaks.values(), default=0) / 1024, 1), "cells": cells or 0,
                         **{f"{p}_s": phases.get(p, "") for p in ("surfaceFeatureExtract", "blockMesh",
                                                                 "snappyHexMesh", "decomposePar", "checkMesh")}})
            if not ok:
                with open(os.path.join(a.out, f"failed-{name}.log"), "w") as f:
                    f.write(out)
            docker("rm", "-f", name, check=False)
        orig, compr, pool_max = self.zram_stat()
        info = {"setup": setup, "containers": n, "ok": sum(j["ok"] for j in jobs),
                "failed": sum(not j["ok"] for j in jobs), "wall_s": round(time.time() - t0, 1),
                "dram_peak_mib": round(read_int(cg_file("memory.max_usage_in_bytes" if mb.V1 else "memory.peak"))
                                       / MIB), "swap_peak_mib": round(max(swap_peak, 0) / MIB),
                "zram_stored_mib": round(orig / MIB), "zram_compressed_mib": round(compr / MIB),
                "zram_pool_max_mib": round(pool_max / MIB)}
        return jobs, info

    def sweep(self, setup, max_n):
        """Batches of 1, 2, ... max_n jobs. The table holds the batches in which
        every job succeeded (a concurrency at which jobs get killed is no
        operating point, as in the report); the sweep ends at the first batch
        with a failure, which jobs.csv and batches.csv still record."""
        rows, all_jobs, batches = [], [], []
        for n in range(1, max_n + 1):
            log(f"{setup}: {n} job{'s' if n > 1 else ''} at once")
            jobs, info = self.batch(setup, n)
            all_jobs += jobs
            batches.append(info)
            good = [j["runtime_s"] for j in jobs if j["ok"]]
            avg = sum(good) / len(good) if good else 0.0
            log(f"  {setup:8} n={n:2}: {len(good)} of {n} ok, avg runtime {avg:,.1f} s, "
                f"{len(good) * 3600 / avg if good else 0:.1f} jobs/hour, DRAM peak {info['dram_peak_mib']:,} MiB, "
                f"swap peak {info['swap_peak_mib']:,} MiB")
            if info["failed"]:
                log(f"  {setup}: {info['failed']} of {n} jobs failed; the sweep stops here")
                break
            rows.append({TABLE[0]: n, TABLE[1]: round(avg, 2), TABLE[2]: round(n * 3600 / avg, 1)})
            best = max(r[TABLE[2]] for r in rows)
            if rows[-1][TABLE[2]] < self.a.stop_below * best:
                log(f"  {setup}: {rows[-1][TABLE[2]]:.1f} jobs/hour is below {self.a.stop_below:.0%} of the best "
                    f"({best:.1f}): past the peak, the sweep stops here (--stop-below)")
                break
        return rows, all_jobs, batches


def write_csv(path, rows, fields=None):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields or list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)


def summarize(tables, batches, peak_mib):
    """The report's two comparisons: peak jobs/hour, and one job's runtime."""
    lines = [f"a job's peak resident memory: {peak_mib:,.0f} MiB"]
    for b in batches:
        if b["failed"]:
            lines.append(f"{b['setup']:8}: {b['failed']} of {b['containers']} jobs failed at {b['containers']} at once "
                         f"(see jobs.csv); the sweep stopped there")
    best = {}
    for setup, rows in tables.items():
        if not rows:
            lines.append(f"{setup:8}: no batch in which every job succeeded")
            continue
        top = max(rows, key=lambda r: r[TABLE[2]])
        best[setup] = top
        lines.append(f"{setup:8}: peak {top[TABLE[2]]:.1f} jobs/hour at {top[TABLE[0]]} containers")
    if "dram" in best and "extended" in best and best["dram"][TABLE[2]] > 0:
        ratio = best["extended"][TABLE[2]] / best["dram"][TABLE[2]]
        lines.append(f"extended / dram peak jobs/hour: {ratio:.2f}x (target at least 1.70x: "
                     f"{'met' if ratio >= 1.7 else 'missed'})")
        one = {s: next((r for r in rows if r[TABLE[0]] == 1 and r[TABLE[1]] > 0), None) for s, rows in tables.items()}
        if one["dram"] and one["extended"]:
            slow = one["extended"][TABLE[1]] / one["dram"][TABLE[1]]
            lines.append(f"one job, extended / dram runtime: {slow:.3f} (target at most 1.10: "
                         f"{'met' if slow <= 1.10 else 'missed'})")
    return "\n".join(lines) + "\n"


def plot(tables, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    style = {"dram": ("tab:red", "s", 10), "extended": ("tab:green", "o", 6)}
    for setup, rows in tables.items():
        xs = [r[TABLE[0]] for r in rows]
        color, marker, ms = style[setup]
        for ax, col in ((ax1, TABLE[2]), (ax2, TABLE[1])):
            ax.plot(xs, [r[col] for r in rows], marker=marker, markersize=ms, color=color, label=setup)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax1.set_ylabel("throughput [jobs/hour]")
    ax2.set_ylabel("average job runtime [s]")
    for ax in (ax1, ax2):
        ax.set_xlabel("containers (jobs at once)")
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    path = os.path.join(out, "jobs-per-hour.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cap", default="1536M", help="the server's DRAM: the parent cgroup's memory cap (default 1536M, "
                    "so that one job fits and two do not: DRAM, not this machine's 2 cores, limits the dram setup)")
    ap.add_argument("--scale", type=float, default=1.6,
                    help="background mesh scale per direction (default 1.6: ~610k cells, ~1 GiB peak)")
    ap.add_argument("--extend", type=float, default=3.6,
                    help="extended memory as a multiple of the cap (default 3.6, as the report's 192 -> 698 GB)")
    ap.add_argument("--zram", default=None, help="zram device size (default a third of the swap tiers)")
    ap.add_argument("--zram-mem-limit", default=None, help="host DRAM zram's pool may take (default half of --zram)")
    ap.add_argument("--dram-max", type=int, default=8, help="most jobs at once in the dram setup (default 8)")
    ap.add_argument("--max-jobs", type=int, default=0,
                    help="most jobs at once in the extended setup (default: extended memory / a job's peak)")
    ap.add_argument("--setups", default=",".join(SETUPS))
    ap.add_argument("--stop-below", type=float, default=0.5,
                    help="stop a sweep once a batch's jobs/hour falls below this share of the best so far "
                         "(default 0.5: past the peak, more jobs only thrash); 0 never stops")
    ap.add_argument("--timeout", type=float, default=3600.0,
                    help="seconds a batch may run before its jobs are killed and counted as failed (default 3600)")
    ap.add_argument("--progress", type=float, default=15.0, help="seconds between progress lines (default 15)")
    mb.add_profile_arg(ap)
    ap.add_argument("--quick", action="store_true", help="a small mesh and server, up to 3 jobs (under 2 minutes)")
    ap.add_argument("--smoke", action="store_true", help="a tiny mesh, up to 2 jobs (the test suite's smoke test)")
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "imdt-" + time.strftime("%Y%m%d-%H%M%S")))
    ap.add_argument("--replot", metavar="DIR", help="only redraw DIR's plot from its dram.csv and extended.csv")
    a = ap.parse_args()
    if a.replot:
        tables = {}
        for setup in SETUPS:
            path = os.path.join(a.replot, f"{setup}.csv")
            if os.path.exists(path):
                with open(path) as f:
                    tables[setup] = [{TABLE[0]: int(r[TABLE[0]]), TABLE[1]: float(r[TABLE[1]]),
                                      TABLE[2]: float(r[TABLE[2]])} for r in csv.DictReader(f)]
        log(f"plot {plot(tables, a.replot)}")
        return
    if a.quick:
        a.cap, a.scale, a.max_jobs = "384M", 0.5, a.max_jobs or 3
    if a.smoke:
        a.cap, a.scale, a.max_jobs, a.dram_max, a.progress, a.timeout = "384M", 0.3, 2, 2, 5.0, 600.0
    a.cap = size(a.cap)
    a.setups = [s for s in a.setups.split(",") if s]
    if not a.setups or any(s not in SETUPS for s in a.setups):
        ap.error(f"setups are {', '.join(SETUPS)}")
    if a.scale <= 0 or a.extend <= 1 or a.cap < 64 * MIB:
        ap.error("--scale must be positive, --extend more than 1, --cap at least 64M")
    swap_total = int(a.cap * (a.extend - 1))
    a.zram = size(a.zram) if a.zram else swap_total // 3
    a.zram_mem_limit = size(a.zram_mem_limit) if a.zram_mem_limit else a.zram // 2
    a.swapfile = swap_total - a.zram
    if a.swapfile < 16 * MIB:
        ap.error(f"--zram leaves {a.swapfile // MIB} MiB of the {swap_total // MIB} MiB of swap tiers to the swap file")
    if os.geteuid() != 0:
        ap.error("needs root (cgroups, swap, a private Docker engine)")
    os.makedirs(a.out, exist_ok=True)
    log(f"server: cap {a.cap // MIB} MiB; extended: + zram {a.zram // MIB} MiB (pool at most "
        f"{a.zram_mem_limit // MIB} MiB) + swap file {a.swapfile // MIB} MiB; mesh scale {a.scale}; "
        f"setups {', '.join(a.setups)}")
    cleanup = Cleanup()
    tables, jobs, batches, peak_mib = {}, [], [], 0.0
    try:
        mb.use_build(a.profile)
        run = Run(a, cleanup)
        log("starting the private Docker engine (the OpenFOAM image is built once, a few minutes)")
        ENGINE.start(cleanup)
        for setup in a.setups:
            run.server(setup)
            stop_daemon = None
            if setup == "extended":
                run.start_tiers()
                stop_daemon = run.start_daemon()
                max_n = a.max_jobs or max(1, math.floor(a.cap * a.extend / MIB / (peak_mib or a.cap / MIB)))
            else:
                max_n = a.dram_max
            rows, sjobs, sbatches = run.sweep(setup, max_n)
            tables[setup], jobs, batches = rows, jobs + sjobs, batches + sbatches
            peak_mib = max([peak_mib] + [j["peak_mib"] for j in sjobs if j["ok"]])
            write_csv(os.path.join(a.out, f"{setup}.csv"), rows, TABLE)
            if stop_daemon:
                stop_daemon()
    finally:
        cleanup.run()
    if not jobs:
        sys.exit("no job ran")
    write_csv(os.path.join(a.out, "jobs.csv"), jobs)
    write_csv(os.path.join(a.out, "batches.csv"), batches)
    summary = summarize(tables, batches, peak_mib)
    with open(os.path.join(a.out, "summary.txt"), "w") as f:
        f.write(summary)
    mb.write_json(os.path.join(a.out, "params.json"),
                  {"params": {k: v for k, v in vars(a).items()}, "job_peak_mib": peak_mib,
                   "image": ENGINE.IMAGE, "machine": mb.machine_facts(),
                   "command": " ".join(sys.argv)})
    try:
        plot(tables, a.out)
    except ImportError as e:
        log(f"no plot ({e}); pip install -r bench/requirements.txt")
    sys.stdout.write(summary)
    log(f"results in {a.out}")


if __name__ == "__main__":
    main()
