"""bench/peers: the server every mode runs on (a parent cgroup with a DRAM cap, a
swap file behind it), the peers' controls (static limits, zswap, Senpai, memext)
and what is measured of the host during a window (DRAM, swap traffic, CPU)."""
import os
import subprocess
import threading
import time

import memextbench as mb
from memextbench import log

PARENT = "/memext-peers"
# The critical workload's load client (pgbench, redis-load) runs on this host,
# outside the server (its clients would be elsewhere in a deployment): in a
# cgroup of its own so that its CPU and CPU stall are measured apart.
CLIENT = "/memext-peers-client"
MIB = 1 << 20
ZSWAP = "/sys/module/zswap/parameters"
HERE = os.path.dirname(os.path.abspath(__file__))


def read(path):
    with open(path) as f:
        return f.read().strip()


def write(path, value):
    with open(path, "w") as f:
        f.write(str(value))


class Server:
    """The parent cgroup (the server's DRAM, `parent`) and its swap tier."""

    def __init__(self, work, cleanup, parent=PARENT):
        self.work, self.cleanup, self.parent = work, cleanup, parent
        self.mem_dir = f"{mb.CG}/memory{parent}" if mb.V1 else f"{mb.CG}{parent}"

    def set_cap(self, cap):
        if not os.path.isdir(self.mem_dir):
            mb.make_cgroup(self.parent, self.cleanup)
        if mb.V1:
            write(f"{self.mem_dir}/memory.limit_in_bytes", cap or (1 << 62))
        else:
            write(f"{self.mem_dir}/memory.max", cap or "max")

    def usage(self):
        return int(read(f"{self.mem_dir}/memory.usage_in_bytes" if mb.V1 else f"{self.mem_dir}/memory.current"))

    def cap_hits(self):
        """How often a charge met the parent's cap and the kernel reclaimed
        there (v1 memory.failcnt, v2 memory.events `max`), or None where it
        cannot be read."""
        try:
            if mb.V1:
                return int(read(f"{self.mem_dir}/memory.failcnt"))
            text = read(f"{self.mem_dir}/memory.events")
            return int(dict(line.split() for line in text.splitlines()).get("max"))
        except (OSError, TypeError, ValueError):
            return None

    def oom_kills(self):
        """OOM kills in the server since the parent was made (v1 oom_control,
        v2 memory.events), or None where the kernel does not count them."""
        try:
            text = read(f"{self.mem_dir}/memory.oom_control" if mb.V1 else f"{self.mem_dir}/memory.events")
            return int(dict(line.split() for line in text.splitlines()).get("oom_kill"))
        except (OSError, TypeError, ValueError):
            return None

    def tiers_up(self, swap, cleanup, kind="swapfile", page_cluster=None, size_mib=None, large_folio_kib=None):
        """A swap area of `swap` bytes (`size_mib` MiB when given) set up by
        `memext tiers`, removed by `cleanup`: memext's swapfile tier, or its
        zram tier (lz4); with `page_cluster`, the swap read-ahead memext's
        tiers set while up; with `large_folio_kib`, the kernel's anonymous
        large folios of that size on meanwhile (`mb.large_folios_on`)."""
        size = size_mib * MIB if size_mib else swap
        mb.tiers_up(self.work, cleanup, page_cluster=page_cluster, large_folio_kib=large_folio_kib,
                    **{"swapfile" if kind == "swapfile" else "zram": size})


ZSWAP_KNOBS = ("enabled", "compressor", "max_pool_percent", "shrinker_enabled")


def zswap_on(cleanup, compressor="lzo-rle"):
    """The kernel's zswap in front of the swap file, at its best for a capped
    cgroup: its compressed pages are charged to the cgroup, so without the
    shrinker (off by default here) a full pool cannot make room by writing cold
    entries back to the swap file, and the cap's reclaim fails into the OOM
    killer. Every parameter is restored by `cleanup`."""
    saved = {name: read(f"{ZSWAP}/{name}") for name in ZSWAP_KNOBS if os.path.exists(f"{ZSWAP}/{name}")}

    def restore():
        for name, value in saved.items():
            write(f"{ZSWAP}/{name}", value)
    cleanup.push("zswap settings", restore)
    write(f"{ZSWAP}/compressor", compressor)
    if "shrinker_enabled" in saved:
        write(f"{ZSWAP}/shrinker_enabled", "Y")
    write(f"{ZSWAP}/enabled", "Y")


def start_senpai(cgroups, args, log_path, cleanup):
    """bench/peers/senpai.py on `cgroups`; stopped (limits put back) by `cleanup`."""
    with open(log_path, "a") as out:
        p = subprocess.Popen(["python3", os.path.join(HERE, "senpai.py"), *args, *cgroups],
                             stdout=out, stderr=subprocess.STDOUT)

    def stop():
        if p.poll() is None:
            p.terminate()
        p.wait(timeout=30)
    cleanup.push(f"senpai {p.pid}", stop)
    time.sleep(0.3)
    if p.poll() is not None:
        raise RuntimeError(f"senpai exited ({p.returncode}); see {log_path}")
    return p.pid


def thread_pids(comm_prefixes):
    """Kernel threads by name (kswapd0, kdamond.0): {name: pid}."""
    out = {}
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                comm = read(f"/proc/{pid}/comm")
            except OSError:
                continue
            if comm.startswith(comm_prefixes):
                out[comm] = int(pid)
    return out


def cpu_seconds(pid):
    try:
        return mb.proc_cpu_seconds(pid)
    except (OSError, IndexError):
        return 0.0


def vmstat():
    out = {}
    for line in read("/proc/vmstat").splitlines():
        k, v = line.split()
        if k in ("pswpin", "pswpout", "zswpin", "zswpout"):
            out[k] = int(v)
    return out


def tlb_shootdowns(text=None):
    """TLB shootdowns the host's CPUs received, summed: /proc/interrupts' TLB
    line (or `text`, its contents). Each is an IPI that interrupted a CPU
    (on x86, for another CPU's unmapping of pages this one may cache)."""
    if text is None:
        text = read("/proc/interrupts")
    for line in text.splitlines():
        if line.strip().startswith("TLB:"):
            return sum(int(x) for x in line.split()[1:] if x.isdigit())
    return 0


def host_cpu_times(text=None):
    """The host's CPU seconds, summed over its CPUs, from /proc/stat's `cpu`
    line (or `text`, its contents): {"irq": hard and soft interrupts,
    "steal": time the hypervisor ran something else while a CPU wanted to
    run}. On a guest without IRQ time accounting (this machine's kernel),
    an interrupt's time is charged to whatever task it interrupted, and a
    busy hypervisor slows everything: a window's steal says how loaded the
    machine under the bench was. Empty when unreadable."""
    try:
        if text is None:
            text = read("/proc/stat")
        hz = os.sysconf("SC_CLK_TCK")
        for line in text.splitlines():
            f = line.split()
            if f and f[0] == "cpu":
                irq, softirq, steal = (int(x) for x in f[6:9])
                return {"irq": (irq + softirq) / hz, "steal": steal / hz}
    except (OSError, ValueError):
        pass
    return {}


def damon_applied():
    """The machine's DAMON scheme's applied bytes, read only. The kernel refreshes
    this file only when asked through kdamonds/0/state (or refresh_ms): never done
    here, since the reclaimer belongs to the machine; None when unreadable."""
    try:
        return int(read("/sys/kernel/mm/damon/admin/kdamonds/0/contexts/0/schemes/0/stats/sz_applied"))
    except (OSError, ValueError):
        return None


def in_client(cleanup):
    """The `preexec_fn` that starts a load client in the `CLIENT` cgroup
    (made here, removed by `cleanup`)."""
    mb.make_cgroup(CLIENT, cleanup)
    return lambda: mb.attach(CLIENT, os.getpid())


def cgroup_cpu_seconds(cgroup):
    """CPU seconds used by a cgroup's tasks (v1 cpuacct, v2 cpu.stat)."""
    try:
        if mb.V1:
            return int(read(f"{mb.CG}/cpuacct{cgroup}/cpuacct.usage")) / 1e9
        stat = dict(line.split() for line in read(f"{mb.CG}{cgroup}/cpu.stat").splitlines())
        return int(stat["usage_usec"]) / 1e6
    except (OSError, KeyError, ValueError):
        return 0.0


def critical_counters(cgroup):
    """A cgroup's own counters (the critical container's, or the client's; None
    before it exists): major faults and refaults from memory.stat, and stall
    totals (us) of memory, CPU and I/O pressure (on v1 from the unified
    hierarchy's PSI files, which follow container membership)."""
    out = {}
    if cgroup is None:
        return out
    mem = f"{mb.CG}/memory{cgroup}" if mb.V1 else f"{mb.CG}{cgroup}"
    psi = f"{mb.CG}/unified{cgroup}" if mb.V1 else mem
    try:
        for line in read(f"{mem}/memory.stat").splitlines():
            k, v = line.split()
            if k in ("pgmajfault", "workingset_refault_anon", "workingset_refault_file"):
                out[k] = int(v)
        for res in ("memory", "cpu", "io"):
            for line in read(f"{psi}/{res}.pressure").splitlines():
                kind, *fields = line.split()
                out[f"{res}_{kind}"] = int(dict(f.split("=") for f in fields)["total"])
    except (OSError, ValueError, KeyError):
        pass
    return out


CRITICAL_COLUMNS = {"pgmajfault": "crit_majflt", "workingset_refault_anon": "crit_refault_anon",
                    "workingset_refault_file": "crit_refault_file", "memory_some": "crit_mem_some_ms",
                    "memory_full": "crit_mem_full_ms", "cpu_some": "crit_cpu_some_ms", "io_some": "crit_io_some_ms"}
CLIENT_COLUMNS = {"cpu_some": "client_cpu_some_ms"}


class Window:
    """What the host did during a measurement window: the parent's DRAM sampled
    every `period` s (mean, max), swap-in/out bytes to the swap device and to zswap's pool (host-wide /proc/vmstat: the
    bench is alone on the machine), the TLB shootdowns every CPU received, and CPU seconds of the controller and of
    kswapd and kdamond, of the critical and the noise containers (their page
    faults and reclaim are charged to them) and of the critical workload's load
    client (`CLIENT`); the critical container's faults, refaults and stalls, and
    the client's CPU stall; the host's CPU seconds in interrupts and stolen by
    its hypervisor (`host_cpu_times`)."""

    def __init__(self, server, controller_pid=None, critical_cgroup=None, period=0.5):
        self.server, self.period, self.series = server, period, []
        self.critical_cgroup = critical_cgroup
        self.pids = {"controller": controller_pid, **thread_pids(("kswapd", "kdamond"))}
        self.stop_flag = threading.Event()

    def __enter__(self):
        self.t0, self.vm0, self.damon0 = time.time(), vmstat(), damon_applied()
        self.tlb0, self.host0 = tlb_shootdowns(), host_cpu_times()
        self.crit0, self.client0 = critical_counters(self.critical_cgroup), critical_counters(CLIENT)
        self.cg_cpu0 = (cgroup_cpu_seconds(self.server.parent),
                        cgroup_cpu_seconds(self.critical_cgroup) if self.critical_cgroup else 0.0,
                        cgroup_cpu_seconds(CLIENT))
        self.cpu0 = {k: cpu_seconds(p) for k, p in self.pids.items() if p}
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()
        return self

    def _sample(self):
        while not self.stop_flag.wait(self.period):
            try:
                usage = self.server.usage()
            except OSError:
                continue
            self.series.append((round(time.time() - self.t0, 3), usage))

    def __exit__(self, *exc):
        self.stop_flag.set()
        self.thread.join()
        vm1, seconds = vmstat(), time.time() - self.t0
        cpu = {k: cpu_seconds(p) - self.cpu0[k] for k, p in self.pids.items() if p}
        damon1 = damon_applied()
        samples = [b for _, b in self.series]
        crit1, client1 = critical_counters(self.critical_cgroup), critical_counters(CLIENT)
        crit_cpu = (cgroup_cpu_seconds(self.critical_cgroup) - self.cg_cpu0[1]) if self.critical_cgroup else 0.0
        noise_cpu = cgroup_cpu_seconds(self.server.parent) - self.cg_cpu0[0] - crit_cpu
        self.result = {
            "window_s": round(seconds, 2), "window_start": round(self.t0, 3),
            "dram_mean_mib": round(sum(samples) / max(1, len(samples)) / MIB, 1),
            "dram_max_mib": round(max(samples, default=0) / MIB, 1),
            "swapin_mib": round((vm1["pswpin"] - self.vm0["pswpin"]) * 4096 / MIB, 1),
            "swapout_mib": round((vm1["pswpout"] - self.vm0["pswpout"]) * 4096 / MIB, 1),
            "zswpin_mib": round((vm1.get("zswpin", 0) - self.vm0.get("zswpin", 0)) * 4096 / MIB, 1),
            "zswpout_mib": round((vm1.get("zswpout", 0) - self.vm0.get("zswpout", 0)) * 4096 / MIB, 1),
            "tlb_shootdowns": tlb_shootdowns() - self.tlb0,
            **{f"host_{k}_s": round(v - self.host0[k], 2) for k, v in host_cpu_times().items() if k in self.host0},
            "cpu_controller_s": round(cpu.get("controller", 0.0), 2),
            "cpu_kswapd_s": round(sum(v for k, v in cpu.items() if k.startswith("kswapd")), 2),
            "cpu_kdamond_s": round(sum(v for k, v in cpu.items() if k.startswith("kdamond")), 2),
            "cpu_critical_s": round(crit_cpu, 2), "cpu_noise_s": round(noise_cpu, 2),
            "cpu_client_s": round(cgroup_cpu_seconds(CLIENT) - self.cg_cpu0[2], 2),
            "damon_applied_mib": (None if damon1 is None or self.damon0 is None
                                  else round((damon1 - self.damon0) / MIB, 1)),
        }
        for (before, after, columns) in ((self.crit0, crit1, CRITICAL_COLUMNS), (self.client0, client1, CLIENT_COLUMNS)):
            for k, col in columns.items():
                if k in after and k in before:
                    d = after[k] - before[k]
                    self.result[col] = round(d / 1000, 1) if col.endswith("_ms") else d
        if not samples:
            log("  warning: no DRAM samples in the window")
