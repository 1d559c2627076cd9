#!/usr/bin/env python3
"""memext's first run: the engine on real containers, in about two minutes.

A critical container (an HTTP function with a 256 MiB heap, called ten times a
second) and four idle ones (192 MiB each) run on a private Docker engine under
one parent cgroup; a memory cap smaller than all of them is put on the parent.
First plain Linux copes alone: its reclaim swaps out what it finds cold, and
then one idle container wakes (a call touches its whole heap). Then the memext
daemon starts: it pushes the idle containers out to the tiers (zram first,
then a swap file, both set up by `memext tiers`), and the same container
wakes again, now brought back in bulk. The run prints DRAM per container
before and after, both wakes side by side (time, major faults), the critical
container's latency in each phase, a live line every two seconds, and writes a
PNG of DRAM per container over time. Everything it made (containers, engine,
cgroups, swap devices, files in /var/tmp) is removed at the end, also on
Ctrl-C.

  sudo scripts/demo                 # builds memext, then runs this
  sudo python3 demo/firstrun.py --help
"""
import argparse
import json
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [os.path.join(ROOT, "bench"), os.path.join(ROOT, "bench", "faas"), HERE]
import memextbench as mb  # noqa: E402
import host  # noqa: E402  (bench/faas: the function containers)
import invoke  # noqa: E402
import report  # noqa: E402

PARENT = "/memext-demo"
ENGINE_DIR = "/var/tmp/memext-dockerd-demo"
MIB = 1 << 20
CRITICAL = "critical"


def args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--idle", type=int, default=4, help="idle containers (default 4)")
    ap.add_argument("--idle-mib", type=int, default=192, help="each idle container's heap (default 192)")
    ap.add_argument("--critical-mib", type=int, default=256, help="the critical container's heap (default 256)")
    ap.add_argument("--cap-mib", type=int, default=640,
                    help="the memory cap on all of them (default 640: about 60%% of their heaps)")
    ap.add_argument("--linux-seconds", type=float, default=20,
                    help="how long plain Linux runs under the cap before the wake (default 20)")
    ap.add_argument("--idle-after", type=int, default=10, help="memext's idle_after in seconds (default 10)")
    a = mb.parse_bench_args(ap, "demo", "it makes cgroups, swap devices and containers")
    if not (1 <= a.idle <= 16 and 32 <= a.idle_mib <= 2048 and 32 <= a.critical_mib <= 2048):
        sys.exit("demo: --idle 1..16, --idle-mib and --critical-mib 32..2048")
    heaps = a.critical_mib + a.idle * a.idle_mib
    if not 128 <= a.cap_mib < heaps:
        sys.exit(f"demo: --cap-mib must be at least 128 and below the heaps' {heaps} MiB (else nothing is pushed)")
    return a


class Containers:
    """The demo's containers and what their cgroups say about them."""

    def __init__(self, names, ids):
        self.names = names
        self.dirs = {n: (f"{mb.CG}/memory{PARENT}/{i}" if mb.V1 else f"{mb.CG}{PARENT}/{i}") for n, i in zip(names, ids)}
        self.ids = dict(zip(names, ids))

    def read(self, name):
        """(resident bytes, swapped bytes, major faults) of one container."""
        d = self.dirs[name]
        stat = dict(line.split() for line in open(f"{d}/memory.stat").read().splitlines())
        if mb.V1:
            return (int(open(f"{d}/memory.usage_in_bytes").read()), int(stat.get("total_swap", 0)),
                    int(stat.get("total_pgmajfault", 0)))
        swap = f"{d}/memory.swap.current"
        return (int(open(f"{d}/memory.current").read()),
                int(open(swap).read()) if os.path.exists(swap) else 0, int(stat.get("pgmajfault", 0)))

    def snapshot(self):
        out = {}
        for n in self.names:
            try:
                res, swp, _ = self.read(n)
                out[n] = (res, swp)
            except (OSError, ValueError):
                pass
        return out


class Recorder:
    """Samples DRAM per container every half second, prints the live line
    every two, and calls the critical container ten times a second (its
    latencies kept with their times)."""

    def __init__(self, cont, sockets, t0):
        self.cont, self.sockets, self.t0 = cont, sockets, t0
        self.samples, self.critical = [], []
        self.phase, self.cap, self.stop = "start", 0, threading.Event()

    def now(self):
        return time.monotonic() - self.t0

    def sample_loop(self):
        last_line = -10.0
        while not self.stop.wait(0.5):
            snap = self.cont.snapshot()
            self.samples.append((self.now(), snap, self.cap))
            if self.now() - last_line >= 2.0:
                last_line = self.now()
                print(report.live_line(self.now(), self.phase, snap, self.cont.names, self.cap), flush=True)

    def critical_loop(self):
        while not self.stop.is_set():
            t = self.now()
            try:
                invoke.call(self.sockets[CRITICAL], "/invoke", timeout=30)
                self.critical.append((t, self.now() - t))
            except OSError:
                pass
            self.stop.wait(max(0.0, 0.1 - (self.now() - t)))

    def start(self, cleanup):
        self.threads = [threading.Thread(target=f, daemon=True) for f in (self.sample_loop, self.critical_loop)]
        for th in self.threads:
            th.start()
        cleanup.push("samplers", self.halt)

    def halt(self):
        self.stop.set()
        for th in self.threads:
            th.join(timeout=35)


def wake(cont, sockets, name, rec):
    """One call to an idle container: its whole heap is touched."""
    res, swapped, maj0 = cont.read(name)
    at = rec.now()
    _, body, secs = invoke.call(sockets[name], "/invoke", timeout=120)
    maj1 = cont.read(name)[2]
    return {"at": at, "latency_s": secs, "handler_ms": invoke.parse_answer(body)[0], "major_faults": maj1 - maj0,
            "swapped_before": swapped, "resident_before": res}


def wait_pushed_out(cfg, cont, name, floor, within):
    """Waits until the daemon says it pushed `name` out (down to near its
    floor); False if that did not happen within `within` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        for row in mb.daemon_status(cfg) or []:
            if row.get("id") == cont.ids[name] and row.get("out") and row["resident_bytes"] <= 2 * floor:
                return True
        time.sleep(1)
    return False


def tiers_up(work, cleanup):
    """memext's tiers for the demo: 1 GiB of zram first, a 1 GiB swap file behind it."""
    cfg = mb.tiers_up(work, cleanup, zram=1 << 30, swapfile=1 << 30)
    print(mb.memext(["--config", cfg, "tiers", "status"], capture_output=True, text=True).stdout, end="")


def remove_engine_dir():
    """The engine's state (its image store included), once nothing of it is
    mounted any more; left in place, and said, if something still is."""
    with open("/proc/self/mounts") as f:
        busy = [line.split()[1] for line in f if line.split()[1].startswith(ENGINE_DIR + "/")]
    if busy:
        raise RuntimeError(f"{ENGINE_DIR} left in place: {busy[0]} is still mounted")
    subprocess.run(["rm", "-rf", "--one-file-system", ENGINE_DIR], check=True)


def step(t0, text):
    print(f"\n== [{time.monotonic() - t0:5.0f} s] {text}", flush=True)


def main():
    a = args()
    t0 = time.monotonic()
    cleanup, work = mb.bench_workspace("demo", a)
    try:
        run(a, t0, cleanup, work)
    finally:
        step(t0, "removing everything the demo made")
        cleanup.run()
        print(f"done in {time.monotonic() - t0:.0f} s; results in {a.out}")


def run(a, t0, cleanup, work):
    step(t0, "memext tiers up: zram, then a swap file")
    tiers_up(work, cleanup)
    mb.make_cgroup(PARENT, cleanup)
    step(t0, f"a private Docker engine (containers under {PARENT}), {1 + a.idle} containers")
    engine = mb.DockerEngine(ENGINE_DIR, cgroup_parent=PARENT)
    cleanup.push(f"dir {ENGINE_DIR}", remove_engine_dir)  # runs after the engine's stop
    engine.start(cleanup)
    names = [CRITICAL, *[f"idle-{k + 1}" for k in range(a.idle)]]
    fleet = host.Fleet(engine, work, names, [a.critical_mib, *[a.idle_mib] * a.idle])
    fleet.start(cleanup)
    cont = Containers(names, fleet.ids())
    sockets = {n: fleet.socket(n) for n in names}
    rec = Recorder(cont, sockets, t0)
    rec.start(cleanup)
    marks, snaps, caps, wakes = [], [], [], []
    time.sleep(3)
    snaps.append(("started, no cap", cont.snapshot()))
    caps.append(0)

    cap = a.cap_mib * MIB
    step(t0, f"plain Linux alone: cap {a.cap_mib} MiB on {PARENT} for {a.linux_seconds:.0f} s")
    marks.append((rec.now(), "Linux alone"))
    rec.phase, rec.cap = "linux", cap
    mb.set_memory_cap(PARENT, cap)
    time.sleep(a.linux_seconds)
    snaps.append(("Linux, under the cap", cont.snapshot()))
    caps.append(cap)
    step(t0, "idle-1 wakes (one call touches its whole heap), without memext")
    wakes.append(("without memext", wake(cont, sockets, "idle-1", rec)))
    print(f"   answered in {wakes[-1][1]['latency_s'] * 1e3:.0f} ms, {wakes[-1][1]['major_faults']:,} major faults")

    step(t0, f"memext daemon starts (idle after {a.idle_after} s, floor 16 MiB; {CRITICAL} is critical)")
    floor = 16 * MIB
    cfg = mb.memext_config(work, PARENT, f"{ENGINE_DIR}/root", critical=(CRITICAL,), idle_after=a.idle_after,
                           floor="16MiB")
    daemon_log = os.path.join(a.out, "daemon.log")
    stop_daemon = mb.start_daemon(cfg, daemon_log, cleanup)
    marks.append((rec.now(), "memext"))
    rec.phase = "memext"
    print(f"   live view of the engine, in another terminal: sudo {mb.BIN}/memext --config {cfg} status --watch 1s")
    if not wait_pushed_out(cfg, cont, "idle-1", floor, a.idle_after + 60):
        print("   memext did not push idle-1 out within the wait (see daemon.log); the wake runs anyway")
    time.sleep(2)
    snaps.append(("memext, under the cap", cont.snapshot()))
    caps.append(cap)
    print(mb.memext(["--config", cfg, "status"], capture_output=True, text=True).stdout, end="")
    step(t0, "idle-1 wakes again, with memext")
    wakes.append(("with memext", wake(cont, sockets, "idle-1", rec)))
    print(f"   answered in {wakes[-1][1]['latency_s'] * 1e3:.0f} ms, {wakes[-1][1]['major_faults']:,} major faults")
    time.sleep(3)
    stop_daemon()
    rec.halt()
    finish(a, rec, cont, snaps, caps, wakes, marks)


def finish(a, rec, cont, snaps, caps, wakes, marks):
    text = ("DRAM per container (resident; swapped out in brackets)\n"
            + report.dram_table(snaps, cont.names, caps) + "\n"
            + report.wake_table(wakes) + "\n"
            + report.critical_table(report.split_by_phase(rec.critical, [(0.0, "no cap"), *marks])))
    print("\n" + text)
    with open(os.path.join(a.out, "summary.txt"), "w") as f:
        f.write(text)
    mb.write_json(os.path.join(a.out, "results.json"), {
        "args": vars(a), "ids": cont.ids, "snapshots": snaps, "caps": caps, "wakes": wakes, "marks": marks,
        "critical": rec.critical, "samples": rec.samples})
    png = os.path.join(a.out, "dram.png")
    report.plot(rec.samples, cont.names, marks, [(w["at"], f"wake {m}") for m, w in wakes], png)
    print(f"plot: {png}")


if __name__ == "__main__":
    try:
        main()
    except (RuntimeError, OSError, subprocess.CalledProcessError, json.JSONDecodeError) as e:
        sys.exit(f"demo: {e}")
