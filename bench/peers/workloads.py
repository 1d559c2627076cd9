"""bench/peers: the critical workloads (Redis over its whole keyspace; PostgreSQL
driven by pgbench) and the noise kinds (fetch, burst, grow), each as real
containers of the private Docker engine."""
import glob
import json
import os
import shutil
import subprocess
import time

import memextbench as mb
from report import nearest_rank

HERE = os.path.dirname(os.path.abspath(__file__))
CRITICAL = "pc-critical"
PG_BIN = "/usr/lib/postgresql/15/bin"
MIB = 1 << 20


def tool(*args, preexec=None):
    r = subprocess.run([os.path.join(mb.BIN, "memext-e2e"), *args], capture_output=True, text=True,
                       preexec_fn=preexec)
    if r.returncode != 0:
        raise RuntimeError(f"memext-e2e {args[0]}: {r.stderr.strip()}")
    return r.stdout


def fresh_dir(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    os.chmod(path, 0o777)  # the containers' users (postgres) write their sockets here
    return path


def wait_for(path, what, seconds=30):
    for _ in range(int(seconds / 0.05)):
        if os.path.exists(path):
            return path
        time.sleep(0.05)
    raise RuntimeError(f"{what} did not open {path}")


def run_container(engine, cleanup, name, *args):
    engine.docker("rm", "-f", name, check=False)
    engine.docker("run", "-d", "--name", name, "--network", "none", *args)
    cleanup.push(f"container {name}", lambda: engine.docker("rm", "-f", name, check=False))


def redis_container(engine, cleanup, name, sock_dir, extra=()):
    run_container(engine, cleanup, name, *extra, "-v", f"{sock_dir}:/sock", engine.IMAGE,
                  "redis-server", "--port", "0", "--unixsocket", f"/sock/{name}.sock", "--unixsocketperm", "777",
                  "--save", "", "--appendonly", "no", "--maxmemory-policy", "noeviction")
    return wait_for(os.path.join(sock_dir, f"{name}.sock"), name)


def percentiles(latencies_ms):
    """p50/p99/p99.9 (ms) of a list, nearest rank."""
    r3 = lambda v: None if v is None else round(v, 3)  # noqa: E731
    return {k: r3(nearest_rank(latencies_ms, q)) for k, q in (("p50", 0.50), ("p99", 0.99), ("p999", 0.999))}


class RedisCritical:
    """Redis over its whole keyspace (anonymous memory), `clients` GETting random keys."""

    def __init__(self, a, work, client=None):
        """`client`: the preexec_fn that puts the load client in its cgroup."""
        self.a, self.dir, self.client = a, os.path.join(work, "critical"), client
        self.keys = a.dataset // a.value_size

    def start(self, engine, cleanup):
        fresh_dir(self.dir)
        self.sock = redis_container(engine, cleanup, CRITICAL, self.dir)
        tool("redis-fill", self.sock, "key", str(self.keys), str(self.a.value_size))

    def warm(self, seconds):
        tool("redis-load", self.sock, str(self.a.clients), str(seconds), str(self.keys), "key", preexec=self.client)

    def measure(self, seconds, hist_path):
        r = json.loads(tool("redis-load", self.sock, str(self.a.clients), str(seconds), str(self.keys), "key",
                            hist_path, preexec=self.client))
        return {"throughput": r["throughput"], "p50": r["p50"], "p99": r["p99"], "p999": r["p999"],
                "requests": r["requests"]}


class PostgresCritical:
    """PostgreSQL 15 with a pgbench dataset of about `dataset` bytes (scale 1 is
    about 16 MiB of table and index), driven by pgbench's built-in select-only
    script (random accounts over the whole table: the working set is the table,
    its index, shared buffers and the page cache) with `clients` connections;
    every transaction's latency from pgbench's own per-transaction log."""

    def __init__(self, a, work, client=None):
        """`client`: the preexec_fn that puts pgbench in its cgroup."""
        self.a, self.dir, self.client = a, os.path.join(work, "critical"), client
        self.scale = max(1, a.dataset // (16 * MIB))

    def _pgbench(self, *args):
        r = subprocess.run(["pgbench", "-h", self.dir, "-U", "postgres", *args, "postgres"],
                           capture_output=True, text=True, preexec_fn=self.client)
        if r.returncode != 0:
            raise RuntimeError(f"pgbench {' '.join(args[:2])}: {r.stderr.strip()[-400:]}")
        return r

    def start(self, engine, cleanup):
        fresh_dir(self.dir)
        server = (f"{PG_BIN}/initdb -D /var/tmp/pg -A trust >/dev/null && exec {PG_BIN}/postgres -D /var/tmp/pg "
                  f"-k /sock -c listen_addresses= -c shared_buffers={self.a.shared_buffers // MIB}MB "
                  f"-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=50")
        run_container(engine, cleanup, CRITICAL, "--user", "postgres", "--shm-size", "512m",
                      "-v", f"{self.dir}:/sock", engine.IMAGE, "sh", "-c", server)
        wait_for(os.path.join(self.dir, ".s.PGSQL.5432"), "postgres")
        for _ in range(100):  # the socket appears before the server accepts
            if subprocess.run(["psql", "-h", self.dir, "-U", "postgres", "-c", "select 1"],
                              capture_output=True).returncode == 0:
                break
            time.sleep(0.1)
        self._pgbench("-i", "-q", "-s", str(self.scale))

    def _run(self, seconds, log_prefix=None):
        args = ["-n", "-S", "-c", str(self.a.clients), "-j", "2", "-T", str(max(1, round(seconds)))]
        if log_prefix:
            args += ["-l", f"--log-prefix={log_prefix}"]
        return self._pgbench(*args)

    def warm(self, seconds):
        self._run(seconds)

    def measure(self, seconds, hist_path):
        prefix = os.path.join(self.dir, "txlog")
        for old in glob.glob(prefix + "*"):
            os.unlink(old)
        t0 = time.time()
        self._run(seconds, prefix)
        elapsed = time.time() - t0
        lat, done = [], []
        for path in glob.glob(prefix + "*"):
            with open(path) as f:
                for line in f:
                    # client transaction latency_us script epoch_s epoch_us (pgbench -l)
                    fields = line.split()
                    if len(fields) >= 6:
                        lat.append(int(fields[2]) / 1000.0)
                        done.append(int(fields[4]) + int(fields[5]) / 1e6)
        write_hist(hist_path, lat)
        write_timeline(hist_path[:-len(".csv")] + "-timeline.csv", done, lat)
        return {"throughput": round(len(lat) / max(elapsed, 1e-9), 1), **percentiles(lat), "requests": len(lat)}


def write_hist(path, latencies_ms):
    xs = sorted(latencies_ms)
    with open(path, "w") as f:
        f.write("percentile,latency_ms\n")
        for q in [i / 1000 for i in range(0, 1000, 5)] + [0.995, 0.999, 0.9999, 1.0]:
            if xs:
                f.write(f"{q:.4f},{nearest_rank(xs, q, presorted=True):.3f}\n")


TIMELINE_BIN_S = 0.1
TIMELINE_OVER_MS = (0.5, 0.75, 1.0, 1.5, 2.0, 5.0, 10.0)


def timeline_rows(done_s, latencies_ms, bin_s=TIMELINE_BIN_S):
    """Per bin of `bin_s` seconds by completion time: (start, transactions, the
    count over each of TIMELINE_OVER_MS, the slowest). What a tail is made of:
    which moments its slow transactions came from, to line up with the noise's
    and the controller's logs."""
    bins = {}
    for t, ms in zip(done_s, latencies_ms):
        b = bins.setdefault(int(t // bin_s), [0] * (len(TIMELINE_OVER_MS) + 1) + [0.0])
        b[0] += 1
        for i, over in enumerate(TIMELINE_OVER_MS):
            b[1 + i] += ms > over
        b[-1] = max(b[-1], ms)
    return [(k * bin_s, *v) for k, v in sorted(bins.items())]


def write_timeline(path, done_s, latencies_ms):
    with open(path, "w") as f:
        f.write("t,tx," + ",".join(f"over_{o}ms" for o in TIMELINE_OVER_MS) + ",max_ms\n")
        for row in timeline_rows(done_s, latencies_ms):
            f.write(f"{row[0]:.1f}," + ",".join(str(v) for v in row[1:-1]) + f",{row[-1]:.3f}\n")


class Noise:
    """n noise containers of one kind; their service read back per window."""

    def __init__(self, a, work, kind, after="keep", serial=False):
        """after: what a burst container does with its heap between wakes
        (noise.py's AFTER: keep, or pageout for the oracle mode); serial: the
        burst containers' wakes served one at a time (noise.py's LOCK)."""
        self.a, self.kind, self.after, self.serial = a, kind, after, serial
        self.dir = os.path.join(work, "noise")
        self.n = a.noise_containers
        self.each = a.noise_total // self.n

    def names(self):
        return [f"pc-noise-{i:02d}" for i in range(self.n)]

    def start(self, engine, cleanup, docker_args=()):
        fresh_dir(self.dir)
        self.log = os.path.join(self.dir, "ops.log")
        if self.kind == "fetch":
            return self._start_fetch(engine, cleanup, docker_args)
        start = time.time() + 1  # cron: slots counted from here; the first after the heap is filled
        for i, name in enumerate(self.names()):
            out = f"/noise/{name}.jsonl"
            if self.kind == "burst":
                schedule = ("cron", "jitter", "poisson")[i % 3]
                period = self.a.burst_period[0] + (self.a.burst_period[1] - self.a.burst_period[0]) * i / max(1, self.n - 1)
                cmd = ["burst", out, str(self.each // MIB), schedule, f"{period:.1f}", f"{start + i:.3f}", str(i)]
            else:
                ramp, work, pause = self.a.grow_phases
                cmd = ["grow", out, str(self.each // MIB), str(ramp), str(work), str(pause), str(i)]
            cmd.append(self.a.noise_heap)
            if self.kind == "burst":
                cmd.append(self.after)
                if self.serial:
                    cmd.append("/noise/wake.lock")
            run_container(engine, cleanup, name, *docker_args, "-v", f"{self.dir}:/noise",
                          "-v", f"{HERE}:/peers:ro", engine.IMAGE, "python3", "/peers/noise.py", *cmd)
        if self.kind == "burst":
            self._wait_ready()

    def _wait_ready(self, seconds=120):
        """Until every burst container has filled its heap."""
        end = time.time() + seconds
        while time.time() < end:
            ready = sum(1 for name in self.names() if any('"ready"' in line for line in self._lines(name)))
            if ready == self.n:
                return
            time.sleep(0.5)
        raise RuntimeError(f"noise: only {ready} of {self.n} containers filled their heaps in {seconds} s")

    def _lines(self, name):
        try:
            with open(os.path.join(self.dir, f"{name}.jsonl")) as f:
                return f.readlines()
        except OSError:
            return []

    def _start_fetch(self, engine, cleanup, docker_args):
        per = self.a.blobs
        scale = self.each / sum(s * c for s, c in per)
        self.blobs = [(f"b{i}", max(1, round(c * scale)), s) for i, (s, c) in enumerate(per)]
        for name in self.names():
            sock = redis_container(engine, cleanup, name, self.dir, docker_args)
            for prefix, count, blob in self.blobs:
                tool("redis-fill", sock, prefix, str(count), str(blob))
        spec = ",".join(f"{prefix}:{count}" for prefix, count, _ in self.blobs)
        p = subprocess.Popen([os.path.join(mb.BIN, "memext-e2e"), "redis-noise", self.dir, str(self.a.pause_us),
                              spec, self.log], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)

        def stop():
            if p.poll() is None:
                p.stdin.close()
                p.wait(timeout=30)
        cleanup.push(f"noise client {p.pid}", stop)

    def ops(self, t0, t1):
        """The operations that ended in [t0, t1): [(kind, latency_ms, nominal_ms)]."""
        out = []
        if self.kind == "fetch":
            try:
                with open(self.log) as f:
                    for line in f:
                        end_ms, lat_us = line.split()
                        if t0 * 1000 <= int(end_ms) < t1 * 1000:
                            out.append(("fetch", int(lat_us) / 1000.0, None))
            except (OSError, ValueError):
                pass
            return out
        for name in self.names():
            for line in self._lines(name):
                try:
                    r = json.loads(line)
                except ValueError:
                    continue
                if r.get("op") in ("wake", "job") and t0 <= r["t"] < t1:
                    nominal = r.get("nominal")
                    out.append((r.get("schedule", r["op"]), r["lat"] * 1000, nominal * 1000 if nominal else None))
        return out

    def raw(self):
        """Every container's log, for the results directory."""
        if self.kind == "fetch":
            return open(self.log).read() if os.path.exists(self.log) else ""
        return "".join(f"{name} {line}" for name in self.names() for line in self._lines(name))
