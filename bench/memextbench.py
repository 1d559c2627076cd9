"""Shared pieces of memext's benchmarks: cgroups (v1 or v2) made and removed by
the harness, the toucher helper (crates/memext-e2e), the memext binary, and a
cleanup stack that runs on exit, on error and on SIGINT/SIGTERM. Beside it and
re-exported here: what a daemon leaves on disk (daemonlog.py) and the private
Docker engine (dockerengine.py)."""
import json
import platform
import re
import os
import signal
import subprocess
import sys
import time

import leftovers
from daemonlog import daemon_events, daemon_problems, ledger_records  # noqa: F401 (the benches' mb.*)
from dockerengine import DockerEngine  # noqa: F401 (the benches' mb.DockerEngine)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release")
CG = "/sys/fs/cgroup"
V1 = os.path.isfile(f"{CG}/memory/memory.stat")


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def size(text):
    """Bytes of a size given as 4G, 1.5GiB, 512M, 64K or a plain number."""
    units = {"K": 10, "M": 20, "G": 30}
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    if t and t[-1] in units:
        return int(float(t[:-1]) * (1 << units[t[-1]]))
    return int(t)


def build():
    log("building memext (release)")
    subprocess.run(["cargo", "build", "--release", "--locked", "-q", "-p", "memext", "-p", "memext-e2e"], cwd=ROOT, check=True)


def add_profile_arg(ap, what="memext"):
    """The benches' --profile flag: which build to run (see use_build)."""
    ap.add_argument("--profile", default="release", choices=["release", "debug"],
                    help=f"which build of {what} to use (debug: as built, no cargo build)")


def parse_bench_args(ap, name, needs):
    """The end of a bench's command line: --out and --profile added, parsed,
    root checked (`needs` says what for); `out` made absolute (default
    results/NAME-TIMESTAMP)."""
    ap.add_argument("--out", default=None, help=f"results directory (default results/{name}-TIMESTAMP)")
    add_profile_arg(ap)
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit(f"bench/{name} needs root ({needs})")
    a.out = os.path.abspath(a.out or os.path.join(ROOT, "results", time.strftime(f"{name}-%Y%m%d-%H%M%S")))
    return a


def bench_workspace(name, a):
    """Makes the results directory, builds memext as `a.profile` says, and
    returns (cleanup, work): the undo stack and a scratch directory
    /var/tmp/memext-bench-NAME-PID it removes at the end."""
    os.makedirs(a.out, exist_ok=True)
    use_build(a.profile)
    cleanup = Cleanup()
    return cleanup, work_dir(name, cleanup)


def work_dir(name, cleanup):
    """Undoes what killed bench runs left (bench/leftovers.py), then makes this
    run's scratch directory /var/tmp/memext-bench-NAME-PID, removed by
    `cleanup`."""
    if leftovers.recover(os.path.join(BIN, "memext")):
        sys.exit("bench: a killed run's swap is still active (see above); not starting beside it")
    work = f"/var/tmp/memext-bench-{name}-{os.getpid()}"
    os.makedirs(work, exist_ok=True)
    cleanup.push(f"dir {work}", lambda: subprocess.run(["rm", "-rf", work]))
    return work


def use_build(profile):
    """Builds memext in release (the benchmarks' default) or uses the debug build
    as it stands (the test suite's smoke runs, after cargo test built it)."""
    global BIN
    if profile == "release":
        build()
    else:
        BIN = os.path.join(ROOT, "target", "debug")


def daemon_status(config):
    """The rows of `memext status --json` from a running daemon, None if it
    does not answer."""
    status = memext(["--config", config, "status", "--json"], capture_output=True, text=True)
    try:
        return json.loads(status.stdout)
    except ValueError:
        return None


def daemon_figures(pid, config, state_dir):
    """A running daemon's own figures, read from the host: contexts it tracks
    (`memext status --json`), knobs it owns (`ledger_records`),
    its open fds and RSS. One look at the fds can count one the daemon
    holds for a moment (bench/churn's check failed on a look that counted 8
    where it keeps 7; what the eighth was is not known): they are counted
    before the status request, whose connection the daemon may still hold
    after answering, as the fewest of three looks 50 ms apart."""
    fds = []
    for _ in range(3):
        fds.append(len(os.listdir(f"/proc/{pid}/fd")))
        time.sleep(0.05)
    rows = daemon_status(config)
    tracked = None if rows is None else len(rows)
    with open(f"/proc/{pid}/status") as f:
        rss_kib = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    return {"tracked": tracked, "ledger": len(ledger_records(state_dir)), "fds": min(fds), "rss_kib": rss_kib}


def memext_config(work, parent, engine_root, critical=(), idle_after=None, floor="16MiB", push_out=None,
                  admit_within=None, extend=(), daemon=(), capacity=None):
    """Writes WORK/memext.toml for a bench's daemon: the containers named in
    `critical` are critical, every other container under cgroup `parent`
    extend (idle after `idle_after` s, at most down to `floor`, pushed out
    `push_out`: when-idle, the default, or when-needed; waking ones admitted
    within `admit_within`, e.g. "0s": no admission; `extend`: more (key,
    TOML value) pairs of the extend class, overriding the named ones); the
    capacity is the parent's limit (or `capacity` bytes, where given);
    `daemon`: more (key, TOML value) pairs of the [daemon] table. Returns
    its path."""
    cfg = os.path.join(work, "memext.toml")
    with open(cfg, "w") as f:
        f.write(f'[host]\nstate_dir = "{work}/dstate"\n\n')
        f.writelines(f'[[select]]\nname = "{name}"\nclass = "critical"\n\n' for name in critical)
        f.write(f'[[select]]\ncgroup = "{parent}/*"\nclass = "extend"\n\n')
        if idle_after is not None:
            named = {"idle_after": f'"{idle_after}s"', "floor": f'"{floor}"'}
            if push_out:
                named["push_out"] = f'"{push_out}"'
            if admit_within:
                named["admit_within"] = f'"{admit_within}"'
            named.update((k, v) for k, v in extend if not k.startswith("critical."))  # a variant's wins
            f.write("[class.extend]\n" + "".join(f"{k} = {v}\n" for k, v in named.items()) + "\n")
        crit = [(k.removeprefix("critical."), v) for k, v in extend if k.startswith("critical.")]
        if crit:
            f.write("[class.critical]\n" + "".join(f"{k} = {v}\n" for k, v in crit) + "\n")
        f.write(f'[runtimes]\ndocker_roots = ["{engine_root}"]\n\n'
                f'[daemon]\n'
                + (f'capacity = "{capacity // (1 << 20)}MiB"\n' if capacity else f'capacity_cgroup = "{parent}"\n')
                + 'tick = "1s"\npoll = "20ms"\n'
                f'socket = "{work}/memext.sock"\n' + "".join(f"{k} = {v}\n" for k, v in daemon))
    return cfg


def variant(mode):
    """The settings of a memext variant: `MODE+KEY=VALUE+...` (e.g.
    memext+wake_cpu_weight=20), each KEY an extend-class setting,
    `critical.KEY` a critical-class one (memext+critical.keep_anon=false) or
    `daemon.KEY` a daemon one (memext+daemon.reclaim=loop) or `tiers.KEY`
    one of memext's tiers (memext+tiers.page_cluster=0), as (key, TOML
    value) pairs; none for a mode without `+`."""
    pairs = []
    for item in mode.split("+")[1:]:
        key, _, value = item.partition("=")
        bare_key = key.removeprefix("daemon.").removeprefix("critical.").removeprefix("tiers.")
        if not bare_key.replace("_", "").isalpha() or not value:
            raise ValueError(f"memext variant {mode!r}: write MODE+KEY=VALUE")
        bare = re.fullmatch(r"\d+(\.\d+)?", value) or value in ("true", "false")  # numbers, booleans
        pairs.append((key, value if bare else f'"{value}"'))
    return pairs


def variant_settings(mode):
    """A variant's settings split for memext_config: (class pairs, daemon
    pairs); a critical-class key keeps its `critical.` prefix; tiers keys
    are `variant_tiers`'."""
    pairs = [(k, v) for k, v in variant(mode) if not k.startswith("tiers.")]
    return ([(k, v) for k, v in pairs if not k.startswith("daemon.")],
            [(k[len("daemon."):], v) for k, v in pairs if k.startswith("daemon.")])


TIERS_KEYS = ("page_cluster", "size_mib", "large_folio_kib")


def variant_tiers(mode):
    """A variant's settings of memext's tiers, as `tiers_up` keyword
    arguments (memext+tiers.page_cluster=0: {"page_cluster": 0});
    `tiers.size_mib` sets the swap area's size in MiB in place of the
    bench's own (memext+tiers.size_mib=8192); `tiers.large_folio_kib` turns
    the kernel's anonymous large folios of that size on while the tiers are
    up (memext+tiers.large_folio_kib=64: see `tiers_up`)."""
    out = {}
    for k, v in variant(mode):
        if k.startswith("tiers."):
            key = k.removeprefix("tiers.")
            if key not in TIERS_KEYS or not v.isdigit():
                raise ValueError(f"memext variant {mode!r}: tiers settings are {', '.join(TIERS_KEYS)} (a number)")
            if key == "size_mib" and int(v) < 1:
                raise ValueError(f"memext variant {mode!r}: tiers.size_mib is the swap area's size in MiB (1 or more)")
            out[key] = int(v)
    return out


THP = "/sys/kernel/mm/transparent_hugepage"


def large_folios_on(kib, cleanup):
    """The kernel's anonymous large folios (mTHP) of `kib` KiB set to
    `always` (THP/hugepages-<kib>kB/enabled), the host's setting restored by
    `cleanup`. A bench harness setting, not memext's: a page of such a folio
    goes to swap and comes back (zram, a synchronous device) with the whole
    folio, one fault for 16 pages at 64 KiB."""
    knob = f"{THP}/hugepages-{int(kib)}kB/enabled"
    if not os.path.exists(knob):
        sizes = sorted(d.removeprefix("hugepages-") for d in os.listdir(THP) if d.startswith("hugepages-"))
        raise ValueError(f"no anonymous large folios of {kib} KiB here (sizes: {', '.join(sizes) or 'none'})")
    with open(knob) as f:
        saved = re.search(r"\[(\w+)\]", f.read()).group(1)

    def restore():
        with open(knob, "w") as f:
            f.write(saved)
    cleanup.push(f"large folios of {kib} KiB back to {saved}", restore)
    with open(knob, "w") as f:
        f.write("always")


def tiers_up(work, cleanup, zram=None, swapfile=None, page_cluster=None, large_folio_kib=None):
    """Swap tiers set up by `memext tiers up` (config WORK/tiers.toml, state
    WORK/tstate), taken down by `cleanup`: a zram device of `zram` bytes (lz4,
    priority 100) and/or a swap file WORK/swap0 of `swapfile` bytes (priority
    50); with `page_cluster`, `tiers.page_cluster` (the kernel's swap
    read-ahead while they are up, the host's restored by down); with
    `large_folio_kib`, `large_folios_on` for as long. Returns the config's
    path."""
    cfg = os.path.join(work, "tiers.toml")
    text = f'[host]\nstate_dir = "{work}/tstate"\n\n'
    if page_cluster is not None:
        text += f"[tiers]\npage_cluster = {int(page_cluster)}\n\n"
    if zram:
        text += f'[tiers.zram]\nsize = "{zram >> 20}MiB"\nalgorithm = "lz4"\npriority = 100\n\n'
    if swapfile:
        text += f'[[tiers.swapfile]]\npath = "{work}/swap0"\nsize = "{swapfile >> 20}MiB"\npriority = 50\n'
    with open(cfg, "w") as f:
        f.write(text)
    if large_folio_kib:
        large_folios_on(large_folio_kib, cleanup)
    memext(["--config", cfg, "tiers", "up"], check=True, capture_output=True)
    cleanup.push("tiers down", lambda: memext(["--config", cfg, "tiers", "down"], check=True, capture_output=True))
    return cfg


def start_daemon(config, log_path, cleanup):
    """Starts `memext --config CONFIG daemon`, its log (JSON events, see
    `daemon_events`) appended to `log_path`; returns a function that stops it
    (also pushed on `cleanup`), its `pid` the daemon's."""
    with open(log_path, "a") as log_file:
        p = subprocess.Popen([os.path.join(BIN, "memext"), "--log-format", "json", "--config", config, "daemon"],
                             stdout=subprocess.DEVNULL, stderr=log_file)

    def stop():
        if p.poll() is None:
            p.terminate()
        p.wait(timeout=30)
    stop.pid = p.pid
    cleanup.push(f"memext daemon {p.pid}", stop)
    time.sleep(0.3)
    if p.poll() is not None:
        raise RuntimeError(f"memext daemon exited ({p.returncode}); see {log_path}")
    return stop


class Cleanup:
    """Undo actions, run last-in first-out, also on SIGINT/SIGTERM. A signal that
    comes while the undo is already under way (a second Ctrl-C, or the first one
    during the final clean-up) lets it finish instead of cutting it short."""

    def __init__(self):
        self.stack = []
        self.running, self.pending = False, None
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._on_signal)

    def push(self, what, fn):
        self.stack.append((what, fn))

    def mark(self):
        """The stack's depth now: `run(mark)` undoes only what was pushed since."""
        return len(self.stack)

    def run(self, down_to=0):
        outer, self.running = self.running, True
        try:
            while len(self.stack) > down_to:
                what, fn = self.stack.pop()
                try:
                    fn()
                except Exception as e:  # keep cleaning up
                    log(f"cleanup of {what} failed: {e}")
        finally:
            self.running = outer
        if self.pending and not outer:  # a signal came during this undo: now the rest
            signum, self.pending = self.pending, None
            self.run()
            sys.exit(128 + signum)

    def _on_signal(self, signum, _frame):
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_IGN)
        log(f"signal {signum}: cleaning up")
        if self.running:
            self.pending = signum  # the undo under way finishes first, then the rest
            return
        self.run()
        sys.exit(128 + signum)


def _dirs(path):
    if V1:
        # Every v1 hierarchy memext reads or writes (the cpu weight, the freezer).
        return [f"{CG}/{h}{path}" for h in ("memory", "cpuacct", "cpu", "freezer", "unified")
                if os.path.isdir(f"{CG}/{h}")]
    return [f"{CG}{path}"]


def make_cgroup(path, cleanup):
    """Creates cgroup `path` (absolute, e.g. /memext-bench/sleeper)."""
    parts = path.strip("/").split("/")
    for i in range(1, len(parts) + 1):
        sub = "/" + "/".join(parts[:i])
        if not V1:
            parent = os.path.dirname(f"{CG}{sub}")
            with open(f"{parent}/cgroup.subtree_control", "w") as f:
                f.write("+memory +cpu")
        for d in _dirs(sub):
            if not os.path.isdir(d):
                os.mkdir(d)
                cleanup.push(f"cgroup {d}", lambda d=d: _rmdir(d))


def _rmdir(d):
    for _ in range(50):
        try:
            os.rmdir(d)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.1)
    raise OSError(f"cannot remove {d}")


def attach(path, pid):
    for d in _dirs(path):
        with open(f"{d}/cgroup.procs", "w") as f:
            f.write(str(pid))


def spawn_in(path, argv, **kw):
    """Starts `argv` inside cgroup `path`: the shell moves itself into the
    memory cgroup and then execs, so that everything the process allocates is
    charged there; then it is moved in every other hierarchy. Returns the Popen."""
    procs = f"{_dirs(path)[0]}/cgroup.procs"
    p = subprocess.Popen(["sh", "-c", 'echo $$ > "$0" && exec "$@"', procs, *argv], **kw)
    attach(path, p.pid)
    return p


def set_memory_cap(path, nbytes):
    if V1:
        with open(f"{CG}/memory{path}/memory.limit_in_bytes", "w") as f:
            f.write(str(nbytes))
    else:
        with open(f"{CG}{path}/memory.max", "w") as f:
            f.write(str(nbytes))


class Toucher:
    """A crates/memext-e2e toucher child: holds memory, touches it on command."""

    def __init__(self, nbytes, cgroup, cleanup):
        self.p = subprocess.Popen([os.path.join(BIN, "memext-e2e"), "toucher", str(nbytes)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        cleanup.push(f"toucher {self.p.pid}", self.stop)
        # Moved only once it is up: what its start-up allocates stays out of the cgroup.
        if self.p.stdout.readline().strip() != "up":
            raise RuntimeError(f"toucher {self.p.pid} did not start")
        attach(cgroup, self.p.pid)

    def ask(self, cmd):
        self.p.stdin.write(cmd + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline().split()
        if not line:
            raise RuntimeError(f"toucher {self.p.pid} died during {cmd}")
        return line

    def alloc(self):
        self.ask("alloc")

    def spin(self, ms):
        """Burns `ms` of CPU without touching memory: a wake."""
        self.ask(f"spin {ms}")

    def touch(self):
        r = self.ask("touch")
        return {"major_faults": int(r[1]), "minor_faults": int(r[2]), "seconds": int(r[3]) / 1e6}

    def incore(self):
        r = self.ask("incore")
        return int(r[1]), int(r[2])

    def stop(self):
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait()


def context(path, nbytes, cleanup):
    """A context: cgroup `path` with a toucher holding `nbytes`, all of it touched."""
    make_cgroup(path, cleanup)
    t = Toucher(nbytes, path, cleanup)
    t.alloc()
    return t


def mapped_fraction(pid, start_end=None):
    """Share of the process's anonymous memory mapped in DRAM (VmRSS / VmRSS+VmSwap)."""
    rss = swap = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                rss = int(line.split()[1])
            elif line.startswith("VmSwap:"):
                swap = int(line.split()[1])
    return rss / max(1, rss + swap)


def memext(args, **kw):
    return subprocess.run([os.path.join(BIN, "memext")] + args, **kw)


def proc_cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        rest = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(rest[11]) + int(rest[12])) / tick


def threads_cpu_seconds(pid):
    """CPU time of `pid`'s live threads to the nanosecond (the first field
    of each /proc/PID/task/TID/schedstat), for windows where a few ms matter:
    /proc/PID/stat counts in 10 ms clock ticks. Threads that exited are not
    in it: for long-lived processes such as the daemon."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # gone meanwhile
    return total / 1e9


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=2)


def machine_facts():
    """What a results directory records about the machine it was measured on."""
    def out(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True).stdout.strip()
        except OSError:
            return "unknown"
    return {"kernel": platform.release(), "machine": platform.machine(), "cpus": os.cpu_count(),
            "cpu_model": next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                               if line.startswith("model name")), ""),
            "mem_total_kib": int(open("/proc/meminfo").read().split()[1]),
            "cgroup": "v1" if V1 else "v2", "docker": out(["dockerd", "--version"]),
            "redis": out(["redis-server", "--version"])}
