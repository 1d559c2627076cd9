#!/usr/bin/env python3
"""bench/containerscale: the container-density experiment of
dmx-container-density-apsys18.txt (§2-§5) at this machine's scale, plain Linux
against memext, side by side in one invocation.

A server is one parent cgroup with a memory cap (--cap) and a swap file behind
it (--swap, set up with `memext tiers`). In it run, as Docker containers of a
private engine: one critical Redis with a dataset of --dataset, driven by
--clients clients GETting random keys of the whole keyspace (every latency
recorded); and n noise containers, Redis blob caches holding blobs of 2.5, 10
and 25 MiB (--blobs), fetched whole by one serial noise client that pauses
--pause-us between fetches, so the total noise load stays constant while n
grows. n goes 1, 3, 5, ... --max-n, containers added cumulatively; at each step
each critical workload is measured for --seconds. The second critical workload
(--workloads web) is a three-container web application like the paper's AcmeAir:
an nginx front, a Python app tier and a Redis data store (--web-dataset), talking
over Unix sockets, driven by the same number of keep-alive HTTP clients.

Modes, each a full sweep: ideal (no cap), linux (cap + swap), memext (cap + swap
+ `memext daemon`, critical Redis in class critical, the noise in extend).

Writes per mode <mode>.csv for Redis and <mode>-web.csv for the web workload (n,
throughput, avg, min, max, p90, p95, p99; ms), histograms/<mode>[-web]-n<N>.csv, params.json (every parameter, the machine's facts),
density.txt, and PNG plots mirroring the paper's Figures 1a-1d / 3-4. Cleans up
every container, cgroup, swap file and daemon it started, also when interrupted."""
import argparse
import csv
import json
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

PARENT = "/memext-cs"
ENGINE = mb.DockerEngine(os.environ.get("MEMEXT_ENGINE_DIR", "/var/tmp/memext-dockerd-cs"), PARENT)
ENGINE_DIR, IMAGE, docker = ENGINE.dir, ENGINE.IMAGE, ENGINE.docker
MODES = ["ideal", "linux", "memext"]
WORKLOADS = ["redis", "web"]
COLUMNS = ["n", "throughput", "avg", "min", "max", "p90", "p95", "p99"]
COLORS = {"ideal": "tab:blue", "linux": "tab:red", "memext": "tab:green"}
MIB = 1 << 20


def tool(*args, **kw):
    r = subprocess.run([os.path.join(mb.BIN, "memext-e2e"), *args], capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise RuntimeError(f"memext-e2e {args[0]}: {r.stderr.strip()}")
    return r.stdout


class Run:
    def __init__(self, a, cleanup):
        self.a, self.cleanup = a, cleanup
        self.work = f"/var/tmp/memext-cs-{os.getpid()}"
        os.makedirs(self.work, exist_ok=True)
        cleanup.push(f"remove {self.work}", lambda: shutil.rmtree(self.work, ignore_errors=True))
        self.critical_dir = os.path.join(self.work, "critical")
        self.noise_dir = os.path.join(self.work, "noise")
        self.blobs = [(f"b{i}", count, blob) for i, (blob, count) in enumerate(a.blobs)]

    def start_tiers(self):
        cfg = os.path.join(self.work, "tiers.toml")
        with open(cfg, "w") as f:
            f.write(f'[host]\nstate_dir = "{self.work}/tstate"\n\n[[tiers.swapfile]]\npath = "{self.work}/swap0"\n'
                    f'size = "{self.a.swap // MIB}MiB"\npriority = 50\n')
        mb.memext(["--config", cfg, "tiers", "up"], check=True, capture_output=True)
        self.cleanup.push("tiers down", lambda: mb.memext(["--config", cfg, "tiers", "down"], capture_output=True))

    def set_cap(self, cap):
        """The server's DRAM: the parent cgroup's limit (None: no cap)."""
        mb.make_cgroup(PARENT, self.cleanup) if not os.path.isdir(f"{mb.CG}/memory{PARENT}") else None
        limit = cap if cap else (1 << 62) if mb.V1 else "max"
        if mb.V1:
            with open(f"{mb.CG}/memory{PARENT}/memory.limit_in_bytes", "w") as f:
                f.write(str(limit))
        else:
            with open(f"{mb.CG}{PARENT}/memory.max", "w") as f:
                f.write(str(limit))

    def redis_container(self, name, sock_dir):
        os.makedirs(sock_dir, exist_ok=True)
        docker("rm", "-f", name, check=False)
        stale = os.path.join(sock_dir, f"{name}.sock")
        if os.path.exists(stale):  # left by the previous mode's container
            os.unlink(stale)
        docker("run", "-d", "--name", name, "--network", "none", "-v", f"{sock_dir}:/sock", IMAGE,
               "redis-server", "--port", "0", "--unixsocket", f"/sock/{name}.sock", "--unixsocketperm", "777",
               "--save", "", "--appendonly", "no", "--maxmemory-policy", "noeviction")
        self.cleanup.push(f"container {name}", lambda: docker("rm", "-f", name, check=False))
        sock = os.path.join(sock_dir, f"{name}.sock")
        for _ in range(200):
            if os.path.exists(sock):
                return sock
            time.sleep(0.05)
        raise RuntimeError(f"{name} did not open its socket")

    def start_daemon(self):
        cfg = mb.memext_config(self.work, PARENT, f"{ENGINE_DIR}/root", ["cs-critical", "cs-web-*"],
                               self.a.idle_after)
        return mb.start_daemon(cfg, os.path.join(self.a.out, "memext-daemon.log"), self.cleanup)

    def start_noise_client(self):
        spec = ",".join(f"{prefix}:{count}" for prefix, count, _ in self.blobs)
        p = subprocess.Popen([os.path.join(mb.BIN, "memext-e2e"), "redis-noise", self.noise_dir, str(self.a.pause_us), spec],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

        def stop():
            if p.poll() is None:
                p.stdin.close()
                out = p.stdout.read()
                p.wait(timeout=30)
                return out
        self.cleanup.push(f"noise client {p.pid}", stop)
        return stop

    def start_web(self):
        """The web workload: HTTP front (nginx) -> app tier (python) -> data store
        (Redis), three containers talking over Unix sockets in a shared directory."""
        a = self.a
        web_dir = os.path.join(self.work, "web")
        for stale in ("front.sock", "app.sock"):
            if os.path.exists(os.path.join(web_dir, stale)):
                os.unlink(os.path.join(web_dir, stale))
        db = self.redis_container("cs-web-db", web_dir)
        tool("redis-fill", db, "key", str(a.web_keys), str(a.value_size))
        conf = os.path.join(HERE, "web")
        for name, cmd in (("cs-web-app", ["python3", "/web/app.py", "/sock/app.sock", "/sock/cs-web-db.sock"]),
                          ("cs-web-front", ["nginx", "-c", "/web/nginx.conf", "-g", "daemon off;"])):
            docker("rm", "-f", name, check=False)
            docker("run", "-d", "--name", name, "--network", "none", "-v", f"{web_dir}:/sock", "-v", f"{conf}:/web:ro", IMAGE, *cmd)
            self.cleanup.push(f"container {name}", lambda name=name: docker("rm", "-f", name, check=False))
        front = os.path.join(web_dir, "front.sock")
        for _ in range(200):
            if os.path.exists(front) and os.path.exists(os.path.join(web_dir, "app.sock")):
                return front
            time.sleep(0.05)
        raise RuntimeError("the web workload's front did not open its socket")

    def measure(self, workload, sock, mode, n):
        a = self.a
        suffix = "" if workload == "redis" else f"-{workload}"
        hist = os.path.join(a.out, "histograms", f"{mode}{suffix}-n{n}.csv")
        if workload == "redis":
            out = tool("redis-load", sock, str(a.clients), str(a.seconds), str(a.keys), "key", hist)
        else:
            out = tool("http-load", sock, str(a.clients), str(a.seconds), str(a.web_keys), hist)
        r = json.loads(out)
        return {"n": n, **{k: r[k] for k in COLUMNS[1:]}}

    def sweep(self, mode):
        a = self.a
        log(f"mode {mode}: cap {'none' if mode == 'ideal' else f'{a.cap // MIB} MiB'}")
        self.set_cap(None if mode == "ideal" else a.cap)
        stop_daemon = self.start_daemon() if mode == "memext" else None
        shutil.rmtree(self.noise_dir, ignore_errors=True)
        os.makedirs(self.noise_dir)
        sockets = {}
        if "redis" in a.workloads:
            sockets["redis"] = self.redis_container("cs-critical", self.critical_dir)
            t0 = time.time()
            tool("redis-fill", sockets["redis"], "key", str(a.keys), str(a.value_size))
            log(f"  critical dataset: {a.keys:,} keys of {a.value_size} B in {time.time() - t0:.1f} s")
        if "web" in a.workloads:
            sockets["web"] = self.start_web()
            log(f"  web workload: front -> app -> data store of {a.web_keys:,} keys")
        stop_noise = self.start_noise_client()
        rows, noise = {w: [] for w in sockets}, 0
        for n in range(1, a.max_n + 1, 2):
            while noise < n:
                name = f"cs-noise-{noise:02d}"
                sock = self.redis_container(name, self.noise_dir)
                for prefix, count, blob in self.blobs:
                    tool("redis-fill", sock, prefix, str(count), str(blob))
                noise += 1
            time.sleep(a.settle)
            for workload, sock in sockets.items():
                row = self.measure(workload, sock, mode, n)
                rows[workload].append(row)
                log(f"  {mode:6} {workload:5} n={n:2}  {row['throughput']:>9,.0f} req/s  avg {row['avg']:.3f}  "
                    f"p99 {row['p99']:.3f}  max {row['max']:.1f} ms")
        fetches = stop_noise()
        log(f"  noise client: {fetches.strip() if fetches else '?'}")
        if stop_daemon:
            stop_daemon()
        for i in range(noise):
            docker("rm", "-f", f"cs-noise-{i:02d}", check=False)
        for name in ("cs-critical", "cs-web-front", "cs-web-app", "cs-web-db"):
            docker("rm", "-f", name, check=False)
        for workload, wrows in rows.items():
            with open(os.path.join(a.out, f"{mode}{'' if workload == 'redis' else '-' + workload}.csv"), "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=COLUMNS)
                w.writeheader()
                w.writerows(wrows)
        return rows


def density(results, same_n=False):
    """Per mode: the largest n whose critical p99 is within 1.2x and throughput within
    0.9x of the ideal mode's at n = 1 (the paper's definition), or, with `same_n`,
    of the ideal mode's at the same n (which takes out what the noise costs in CPU
    alone, large on a 2-core machine)."""
    ideal = {r["n"]: r for r in results.get("ideal", [])}
    if 1 not in ideal:
        return {}
    out = {}
    for mode, rows in results.items():
        ok = []
        for r in rows:
            base = ideal.get(r["n"]) if same_n else ideal[1]
            if base and r["p99"] <= 1.2 * base["p99"] and r["throughput"] >= 0.9 * base["throughput"]:
                ok.append(r["n"])
        out[mode] = max(ok) if ok else 0
    return out


def report(all_results, a):
    """density.txt, params.json and the plots from the results of each workload."""
    lines = ["# density: the largest n at which the critical p99 is within 1.2x and its throughput",
             "# within 0.9x of the ideal mode's at n = 1 (paper) / at the same n (CPU taken out)"]
    densities = {}
    for workload, results in all_results.items():
        dens, dens_same = density(results), density(results, same_n=True)
        densities[workload] = {"vs_ideal_n1": dens, "vs_ideal_same_n": dens_same}
        lines += ["", f"workload {workload}", "mode     vs-ideal-n1  vs-ideal-same-n"]
        lines += [f"{m:8} {dens[m]:>11}  {dens_same.get(m, 0):>15}" for m in dens]
        for name, d in (("n = 1", dens), ("same n", dens_same)):
            if d.get("linux") and d.get("memext"):
                lines.append(f"memext / linux ({name}): {d['memext'] / d['linux']:.2f}x")
        if "linux" in results and "memext" in results:
            lines.append(f"throughput at n=1, memext / linux: {results['memext'][0]['throughput'] / results['linux'][0]['throughput']:.3f}")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(a.out, "density.txt"), "w") as f:
        f.write(text)
    print(text, end="")
    path = os.path.join(a.out, "params.json")
    if a.replot and os.path.exists(path):
        with open(path) as f:
            record = json.load(f)  # the run's own parameters and machine facts
    else:
        facts = mb.machine_facts()
        record = {"params": {k: v for k, v in vars(a).items()}, "machine": facts}
    record.pop("density_same_n", None)
    record["density"] = densities
    mb.write_json(path, record)
    for workload, results in all_results.items():
        for p in plot(results, a.out, "" if workload == "redis" else f"{workload}-"):
            log(f"plot {p}")


def load_results(out):
    all_results = {}
    for workload in WORKLOADS:
        suffix = "" if workload == "redis" else f"-{workload}"
        for mode in MODES:
            path = os.path.join(out, f"{mode}{suffix}.csv")
            if os.path.exists(path):
                with open(path) as f:
                    rows = [{k: (int(v) if k == "n" else float(v)) for k, v in r.items()} for r in csv.DictReader(f)]
                all_results.setdefault(workload, {})[mode] = rows
    return all_results


def plot(results, out, prefix=""):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figs = [("fig1a-throughput", [("throughput", "-")], "throughput [requests/s]", False),
            ("fig1b-latency", [("min", ":"), ("avg", "-"), ("max", "--")], "latency [ms]", False),
            ("fig1c-latency-log", [("min", ":"), ("avg", "-"), ("max", "--")], "latency [ms]", True),
            ("fig1d-percentiles", [("p90", ":"), ("p95", "--"), ("p99", "-")], "latency [ms]", False)]
    paths = []
    for name, series, ylabel, logy in figs:
        fig, ax = plt.subplots(figsize=(7, 4))
        for mode, rows in results.items():
            for col, style in series:
                ax.plot([r["n"] for r in rows], [r[col] for r in rows], style, marker="o", markersize=3,
                        color=COLORS.get(mode), label=f"{mode} {col}" if len(series) > 1 else mode)
        ax.set_xlabel("noise containers")
        ax.set_ylabel(ylabel)
        if logy:
            ax.set_yscale("log")
        ax.legend(fontsize=7, ncol=2)
        ax.grid(alpha=0.3)
        fig.tight_layout()
        path = os.path.join(out, f"{prefix}{name}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cap", default="4G", help="the server's DRAM: the parent cgroup's memory cap (default 4G)")
    ap.add_argument("--swap", default="16G", help="swap file behind it (default 16G)")
    ap.add_argument("--dataset", default=None, help="critical Redis dataset (default a quarter of --cap)")
    ap.add_argument("--value-size", type=int, default=1024, help="bytes per critical value (default 1024)")
    ap.add_argument("--clients", type=int, default=25, help="critical clients (default 25, as the paper's JMeter threads)")
    ap.add_argument("--seconds", type=float, default=20.0, help="measurement per step (default 20)")
    ap.add_argument("--settle", type=float, default=5.0, help="seconds after adding containers before measuring")
    ap.add_argument("--blobs", default="2.5M:32,10M:6,25M:5",
                    help="noise blobs SIZE:COUNT,... (default the paper's 500/100/80 scaled by 1/16)")
    ap.add_argument("--pause-us", type=int, default=150, help="noise client pause between fetches, us (default 150)")
    ap.add_argument("--max-n", type=int, default=49, help="noise containers at the end of the sweep (default 49)")
    ap.add_argument("--idle-after", type=float, default=10.0, help="memext: seconds before an extend context is idle")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--workloads", default=",".join(WORKLOADS),
                    help="critical workloads measured at each step: redis, web (nginx -> python app -> redis)")
    ap.add_argument("--web-dataset", default=None, help="the web workload's data store (default a sixteenth of --cap)")
    mb.add_profile_arg(ap)
    ap.add_argument("--quick", action="store_true", help="n up to 9, smaller server, short steps (under 15 min)")
    ap.add_argument("--smoke", action="store_true", help="n up to 3, tiny sizes (the test suite's smoke test)")
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "containerscale-" + time.strftime("%Y%m%d-%H%M%S")))
    ap.add_argument("--replot", metavar="DIR", help="only recompute density, params and plots from DIR's CSVs")
    a = ap.parse_args()
    if a.replot:
        a.out = a.replot
        report(load_results(a.replot), a)
        return
    if a.quick:
        a.cap, a.swap, a.max_n, a.seconds, a.settle = "2G", "8G", 9, 8.0, 3.0
    if a.smoke:
        a.cap, a.swap, a.max_n, a.seconds, a.settle, a.blobs, a.idle_after = "256M", "1G", 3, 1.0, 0.5, "1M:4,4M:1", 2.0
    a.cap, a.swap = size(a.cap), size(a.swap)
    a.dataset = size(a.dataset) if a.dataset else a.cap // 4
    a.keys = a.dataset // a.value_size
    a.web_keys = (size(a.web_dataset) if a.web_dataset else a.cap // 16) // a.value_size
    a.workloads = [w for w in a.workloads.split(",") if w]
    if not a.workloads or any(w not in WORKLOADS for w in a.workloads):
        ap.error(f"workloads are {', '.join(WORKLOADS)}")
    a.blobs = [(size(b.split(":")[0]), int(b.split(":")[1])) for b in a.blobs.split(",")]
    a.modes = [m for m in a.modes.split(",") if m]
    if any(m not in MODES for m in a.modes):
        ap.error(f"modes are {', '.join(MODES)}")
    if os.geteuid() != 0:
        ap.error("needs root (cgroups, swap, a private Docker engine)")
    os.makedirs(os.path.join(a.out, "histograms"), exist_ok=True)
    per_container = sum(s * c for s, c in a.blobs)
    log(f"server: cap {a.cap // MIB} MiB, swap {a.swap // MIB} MiB; critical {a.dataset // MIB} MiB ({a.keys:,} keys); "
        f"noise {per_container // MIB} MiB per container, up to {a.max_n}; modes {', '.join(a.modes)}")
    cleanup = Cleanup()
    results = {}
    try:
        mb.use_build(a.profile)
        run = Run(a, cleanup)
        log("starting the private Docker engine and the swap tier")
        ENGINE.start(cleanup)
        run.start_tiers()
        for mode in a.modes:
            for workload, rows in run.sweep(mode).items():
                results.setdefault(workload, {})[mode] = rows
    finally:
        cleanup.run()
    report(results, a)
    log(f"results in {a.out}")


if __name__ == "__main__":
    main()
