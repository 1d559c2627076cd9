#!/usr/bin/env python3
"""bench/cscm: the persistent-memory experiments of cscm-containerized-scm.txt §IV
(Figures 4-9) with libscm, every configuration side by side in one run:

  host               the benchmark on the host, region opened by path
  container+libscm   in a Docker container, region obtained from the pmem broker
  container+libscm/no-seccomp
                     the same in a container without Docker's default seccomp filter
                     (a diagnostic: the filter runs on every system call)
  container+volume   in a container, a file on a bind-mounted volume, mmap + msync
  container+storage  in a container, a file in its writable layer (overlay2), mmap + msync
  dram               plain volatile memory (the ceiling)

Benchmarks (cscmbench.c): array updates, B-tree inserts, STREAM Copy, Redis
SET/GET/LPUSH with Redis's heap on the region (unmodified redis-server with an
LD_PRELOAD malloc on libscm; the region is not synced, as Redis runs without
persistence: it measures the memory, not the allocator's durability), and with persistence: array updates in transactions
of 10 elements and B-tree inserts, each transaction durable. Each is run per
backing store of the regions and volumes: tmpfs (standing in for SCM) and disk.
Not in the paper: the cost of one system call in each configuration (a seccomp
filter runs on every call; syscall-bound Redis feels it).

Writes cscm.csv, one PNG per figure, params.json (every parameter and the
machine's facts) and summary.txt to the results directory. Starts a private
Docker engine and the broker, and removes every container, region and file it
made, also when interrupted."""
import argparse
import csv
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import memextbench as mb  # noqa: E402
from memextbench import Cleanup, log  # noqa: E402

CONFIGS = ["host", "container+libscm", "container+libscm/no-seccomp", "container+volume", "container+storage", "dram"]
NO_SECCOMP = "container+libscm/no-seccomp"
BENCHES = ["array", "btree", "stream", "redis", "array-tx", "btree-tx", "syscall"]
FIGURES = {"array": "Fig. 4: array updates", "btree": "Fig. 5: B-tree inserts", "stream": "Fig. 6: STREAM Copy",
           "redis": "Fig. 7: Redis", "array-tx": "Fig. 8: array updates, durable transactions of 10",
           "btree-tx": "Fig. 9: B-tree inserts, each durable",
           "syscall": "One system call (not in the paper; lower is better)"}
ENGINE = mb.DockerEngine(os.environ.get("MEMEXT_ENGINE_DIR", "/var/tmp/memext-dockerd"))
ENGINE_DIR, IMAGE, docker = ENGINE.dir, ENGINE.IMAGE, ENGINE.docker
INSIDE = "/opt/cscm"


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def build(a, out):
    libdir = os.path.join(ROOT, "target", a.profile)
    if a.profile == "release":
        log("building libscm and memext (release)")
        subprocess.run(["cargo", "build", "--release", "--locked", "-q", "-p", "libscm", "-p", "memext"], cwd=ROOT, check=True)
    tools = os.path.join(out, "tools")
    os.makedirs(os.path.join(tools, "lib"), exist_ok=True)
    shutil.copy(os.path.join(libdir, "libscm.so"), os.path.join(tools, "lib", "libscm.so"))
    inc = os.path.join(ROOT, "crates/libscm/include")
    common = ["-O2", "-Wall", "-Wextra", "-Werror", "-I", inc, f"-L{tools}/lib", f"-Wl,-rpath,{INSIDE}/lib:{tools}/lib"]
    sh(["cc", *common, os.path.join(HERE, "cscmbench.c"), "-o", os.path.join(tools, "cscmbench"), "-lscm"])
    sh(["cc", *common, "-fPIC", "-shared", os.path.join(HERE, "scm_malloc.c"), "-o",
        os.path.join(tools, "lib", "libscm_malloc.so"), "-lscm", "-ldl"])
    return tools, os.path.join(libdir, "memext")


class Bench:
    def __init__(self, a, cleanup, tools, memext, out):
        self.a, self.cleanup, self.tools, self.memext, self.out = a, cleanup, tools, memext, out
        self.rows = []

    def setup_backing(self, backing):
        """Region root, volume directory and broker for one backing store."""
        a = self.a
        base = f"/dev/shm/memext-cscm-{os.getpid()}" if backing == "tmpfs" else f"/var/tmp/memext-cscm-{os.getpid()}"
        os.makedirs(base, exist_ok=True)
        self.cleanup.push(f"remove {base}", lambda: shutil.rmtree(base, ignore_errors=True))
        self.base, self.regions, self.volume = base, os.path.join(base, "regions"), os.path.join(base, "volume")
        os.makedirs(self.volume, exist_ok=True)
        sock_dir = os.path.join(self.out, f"sock-{backing}")
        cfg = os.path.join(self.out, f"memext-{backing}.toml")
        with open(cfg, "w") as f:
            f.write(f'[runtimes]\ndocker_roots = ["{ENGINE_DIR}/root"]\n\n[pmem]\nroot = "{self.regions}"\n'
                    f'socket = "{sock_dir}/pmem.sock"\ncontainer_quota = "{a.region_mb * 4}M"\n'
                    f'total_quota = "{a.region_mb * 8}M"\n')
        log_file = open(os.path.join(self.out, f"broker-{backing}.log"), "w")
        broker = subprocess.Popen([self.memext, "--config", cfg, "pmem-broker"], stdout=subprocess.DEVNULL, stderr=log_file)

        def stop_broker():
            broker.terminate()
            broker.wait(timeout=10)
        self.cleanup.push("stop the pmem broker", stop_broker)
        for _ in range(100):
            if os.path.exists(f"{sock_dir}/pmem.sock"):
                break
            time.sleep(0.1)
        self.container = self.start_container(f"memext-cscm-{backing}", sock_dir)
        self.unconfined = self.start_container(f"memext-cscm-{backing}-unconfined", sock_dir,
                                               "--security-opt", "seccomp=unconfined")
        return stop_broker

    def start_container(self, name, sock_dir, *options):
        docker("rm", "-f", name, check=False)
        docker("run", "-d", "--name", name, "--network", "none", *options,
               "-v", f"{self.tools}:{INSIDE}:ro", "-v", f"{sock_dir}:/run/memext/pmem",
               "-v", f"{self.volume}:/vol", IMAGE, "sleep", "infinity")
        self.cleanup.push(f"remove container {name}", lambda: docker("rm", "-f", name, check=False))
        docker("exec", name, "mkdir", "-p", "/var/cscm")
        return name

    def container_of(self, config):
        return self.unconfined if config == NO_SECCOMP else self.container

    def forget_regions(self):
        """Remove the region and map files of the last run (the broker's and ours)."""
        for d in (self.regions, self.volume):
            for dirpath, _dirs, files in os.walk(d):
                for f in files:
                    os.unlink(os.path.join(dirpath, f))
        for f in ("host.region", "redis.region"):
            if os.path.exists(os.path.join(self.base, f)):
                os.unlink(os.path.join(self.base, f))
        for c in (self.container, self.unconfined):
            docker("exec", c, "sh", "-c", "rm -f /var/cscm/*")

    def cscm(self, config, bench, seconds, size):
        t = os.path.join(self.tools, "cscmbench")
        env = {"CSCM_REGION_SIZE": str(self.a.region_mb << 20)}
        args = [bench, str(seconds)] + ([str(size)] if size else [])
        if config == "host":
            cmd = [t, "scm-path", os.path.join(self.base, "host.region"), *args]
        elif config == "dram":
            cmd = [t, "dram", "-", *args]
        else:
            where = {"container+libscm": ["scm-broker", "cscm"], NO_SECCOMP: ["scm-broker", "cscm"],
                     "container+volume": ["mmap", "/vol/bench.map"],
                     "container+storage": ["mmap", "/var/cscm/bench.map"]}[config]
            cmd = [*ENGINE.cli, "exec", *sum((["-e", f"{k}={v}"] for k, v in env.items()), []),
                   self.container_of(config), f"{INSIDE}/cscmbench", *where, *args]
        out = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **env})
        if out.returncode != 0:
            raise RuntimeError(f"{config} {bench}: {out.stderr.strip() or out.stdout.strip()}")
        _name, value, unit = out.stdout.split()
        return float(value), unit

    def redis(self, config):
        """Redis SET/GET/LPUSH requests/s with its heap on the configuration's memory."""
        a = self.a
        region = {"host": os.path.join(self.base, "redis.region"), "container+libscm": "redis", NO_SECCOMP: "redis",
                  "container+volume": "/vol/redis.region", "container+storage": "/var/cscm/redis.region"}.get(config)
        # Fig. 7 measures Redis on the memory, not the allocator's durability: the region
        # is not synced (SCM_PERSIST_MODE=fence), else every malloc on a disk file msyncs.
        env = [] if region is None else [f"LD_PRELOAD={INSIDE if config != 'host' else self.tools}/lib/libscm_malloc.so",
                                         f"SCM_REGION={region}", f"SCM_REGION_SIZE={a.region_mb}M", "SCM_PERSIST_MODE=fence"]
        server = ["redis-server", "--port", "0", "--unixsocket", "/tmp/cscm-redis.sock", "--save", "", "--appendonly", "no"]
        bench = ["redis-benchmark", "-s", "/tmp/cscm-redis.sock", "-t", "set,get,lpush", "-n", str(a.redis_requests), "-q"]
        stop = ["redis-cli", "-s", "/tmp/cscm-redis.sock", "shutdown", "nosave"]
        if config in ("host", "dram"):
            proc = subprocess.Popen(["env", *env, *server], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.cleanup.push("stop redis", lambda: proc.poll() is None and proc.terminate())
            run = lambda cmd: subprocess.run(cmd, capture_output=True, text=True)  # noqa: E731
            wait = lambda: os.path.exists("/tmp/cscm-redis.sock")  # noqa: E731
        else:
            container = self.container_of(config)
            docker("exec", "-d", container, "env", *env, *server)
            run = lambda cmd: subprocess.run([*ENGINE.cli, "exec", container, *cmd],  # noqa: E731
                                             capture_output=True, text=True)
            wait = lambda: run(["test", "-S", "/tmp/cscm-redis.sock"]).returncode == 0  # noqa: E731
        for _ in range(100):
            if wait():
                break
            time.sleep(0.1)
        out = run(bench).stdout
        run(stop)
        if config in ("host", "dram"):
            proc.wait(timeout=10)
        if config == "host":
            objects = sh([os.path.join(self.tools, "cscmbench"), "scm-path", region, "inspect", "0"]).split()[1]
            log(f"  host redis: {objects} objects in the region after the run (its heap was there)")
        got = {}
        for line in out.replace("\r", "\n").splitlines():
            m = re.match(r"\s*(SET|GET|LPUSH): ([0-9.]+) requests per second", line)
            if m:
                got[m.group(1)] = float(m.group(2))
        if len(got) != 3:
            raise RuntimeError(f"{config} redis-benchmark printed: {out[-300:]}")
        return got

    def run_backing(self, backing):
        """Every benchmark in every configuration, in rounds that alternate the
        configurations (so all see the same machine) and rotate their order (the
        machine drifts within a round: whoever always ran first would gain); the
        median of the rounds."""
        a = self.a
        log(f"backing store: {backing}")
        stop_broker = self.setup_backing(backing)
        for bench in a.benches:
            got = {}
            for r in range(a.rounds):
                for config in CONFIGS[r % len(CONFIGS):] + CONFIGS[:r % len(CONFIGS)]:
                    if bench == "redis":
                        for op, v in self.redis(config).items():
                            got.setdefault((config, f"redis-{op}", "requests/s"), []).append(v)
                    else:
                        size = a.sizes.get(bench.split("-")[0], 0)
                        seconds = a.seconds_tx if bench.endswith("-tx") else a.seconds
                        if bench == "syscall":
                            seconds = min(seconds, 1.0)  # millions of calls: steady within a second
                        v, unit = self.cscm(config, bench, seconds, size)
                        got.setdefault((config, bench, unit), []).append(v)
                    self.forget_regions()
            for (config, name, unit), values in got.items():
                v = statistics.median(values)
                self.rows.append({"backing": backing, "config": config, "bench": name, "value": v, "unit": unit,
                                  "rounds": " ".join(f"{x:.1f}" for x in values)})
                log(f"  {name:12} {config:18} {v:>16,.1f} {unit}  (median of {len(values)})")
        stop_broker()


def plot(rows, out, backings):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    paths = []
    for bench, title in FIGURES.items():
        names = sorted({r["bench"] for r in rows if r["bench"] == bench or r["bench"].startswith(bench + "-")
                        and bench == "redis"})
        if not names:
            continue
        fig, axes = plt.subplots(1, len(backings), figsize=(6 * len(backings), 4), squeeze=False)
        for ax, backing in zip(axes[0], backings):
            x = np.arange(len(CONFIGS))
            width = 0.8 / len(names)
            for i, name in enumerate(names):
                vals = [next((r["value"] for r in rows if r["backing"] == backing and r["config"] == c and r["bench"] == name), 0)
                        for c in CONFIGS]
                ax.bar(x + i * width, vals, width, label=name)
            unit = next(r["unit"] for r in rows if r["bench"] == names[0])
            ax.set_xticks(x + width * (len(names) - 1) / 2, CONFIGS, rotation=20, fontsize=8)
            ax.set_ylabel(unit)
            ax.set_title(f"{title} ({backing})", fontsize=10)
            if bench.endswith("-tx"):
                ax.set_yscale("log")
            if len(names) > 1:
                ax.legend(fontsize=8)
        fig.tight_layout()
        path = os.path.join(out, f"cscm-{bench}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths


def summarize(rows, backings):
    def val(backing, config, bench):
        return next((r["value"] for r in rows if r["backing"] == backing and r["config"] == config and r["bench"] == bench), None)
    lines = ["# bench/cscm summary", "", "container+libscm vs host (target: within 5% on every benchmark)"]
    for backing in backings:
        for bench in sorted({r["bench"] for r in rows} - {"syscall"}):
            h, c = val(backing, "host", bench), val(backing, "container+libscm", bench)
            u = val(backing, NO_SECCOMP, bench)
            if h and c:
                lines.append(f"  {backing:6} {bench:12} {c / h:6.3f}x {'ok   ' if c / h >= 0.95 else 'BELOW'}"
                             + (f"   without seccomp {u / h:6.3f}x" if u else ""))
    lines += ["", "one system call (ns; a seccomp filter runs on every call, which syscall-bound Redis feels)"]
    for backing in backings:
        costs = [(c, val(backing, c, "syscall")) for c in ("host", "container+libscm", NO_SECCOMP)]
        if all(v for _, v in costs):
            lines.append(f"  {backing:6} " + "   ".join(f"{c} {v:.0f}" for c, v in costs))
    lines += ["", "durable benchmarks: container+libscm vs container+volume and container+storage, same backing"]
    for backing in backings:
        for bench in ("array-tx", "btree-tx"):
            c, v, s = val(backing, "container+libscm", bench), val(backing, "container+volume", bench), val(backing, "container+storage", bench)
            if c and v and s:
                lines.append(f"  {backing:6} {bench:9} vs volume {c / v:8.2f}x   vs storage {c / s:8.2f}x")
    if "tmpfs" in backings and "disk" in backings:
        lines += ["", "the paper's comparison: libscm on SCM (tmpfs stand-in) vs a volume / container storage on disk"]
        for bench in ("array-tx", "btree-tx"):
            c, v, s = val("tmpfs", "container+libscm", bench), val("disk", "container+volume", bench), val("disk", "container+storage", bench)
            if c and v and s:
                lines.append(f"  {bench:9} vs volume {c / v:8.1f}x   vs storage {c / s:8.1f}x")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backing", default="tmpfs,disk", help="backing stores to run: tmpfs,disk (default both)")
    ap.add_argument("--benches", default=",".join(BENCHES), help=f"comma list of {','.join(BENCHES)}")
    ap.add_argument("--seconds", type=float, default=3.0, help="seconds per non-durable run (default 3)")
    ap.add_argument("--seconds-tx", type=float, default=3.0, help="seconds per durable run (default 3)")
    ap.add_argument("--array", type=int, default=20_000_000, help="array elements (default 20M, as the paper)")
    ap.add_argument("--btree", type=int, default=200_000, help="initial B-tree keys (default 200k, as the paper)")
    ap.add_argument("--stream-mb", type=int, default=90, help="MB per STREAM array (default 90, as the paper)")
    ap.add_argument("--redis-requests", type=int, default=100_000, help="requests per redis-benchmark test")
    ap.add_argument("--rounds", type=int, default=5,
                    help="rounds alternating the configurations, each in a rotated order; the median is kept (default 5)")
    ap.add_argument("--region-mb", type=int, default=1024, help="region / mapped file size in MiB")
    mb.add_profile_arg(ap, "libscm and memext")
    ap.add_argument("--quick", action="store_true", help="tiny sizes, short runs: the test suite's smoke test")
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "cscm-" + time.strftime("%Y%m%d-%H%M%S")))
    a = ap.parse_args()
    a.out = os.path.abspath(a.out)  # mounted into containers: Docker wants absolute paths
    if a.quick:
        a.seconds, a.seconds_tx, a.array, a.btree, a.stream_mb, a.redis_requests, a.region_mb = 0.2, 0.2, 100_000, 2_000, 4, 2_000, 64
        a.rounds = 1
    a.sizes = {"array": a.array, "btree": a.btree, "stream": a.stream_mb}
    a.benches = [b for b in a.benches.split(",") if b]
    backings = [b for b in a.backing.split(",") if b]
    bad = [b for b in a.benches if b not in BENCHES] + [b for b in backings if b not in ("tmpfs", "disk")]
    if bad:
        ap.error(f"unknown benchmark or backing store: {', '.join(bad)}")
    if os.geteuid() != 0:
        ap.error("needs root (a private Docker engine, the pmem broker)")
    os.makedirs(a.out, exist_ok=True)
    cleanup = Cleanup()
    try:
        tools, memext = build(a, a.out)
        log("starting the private Docker engine")
        ENGINE.start(cleanup)
        b = Bench(a, cleanup, tools, memext, a.out)
        for backing in backings:
            b.run_backing(backing)
    finally:
        cleanup.run()
    rows = b.rows
    with open(os.path.join(a.out, "cscm.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["backing", "config", "bench", "value", "unit", "rounds"])
        w.writeheader()
        w.writerows(rows)
    facts = mb.machine_facts()
    params = {k: v for k, v in vars(a).items() if k != "sizes"}
    with open(os.path.join(a.out, "params.json"), "w") as f:
        json.dump({"params": params, "machine": facts, "configs": CONFIGS}, f, indent=2)
    summary = summarize(rows, backings)
    with open(os.path.join(a.out, "summary.txt"), "w") as f:
        f.write(summary)
    print(summary, end="")
    for p in plot(rows, a.out, backings):
        log(f"plot {p}")
    log(f"results in {a.out}")


if __name__ == "__main__":
    main()
