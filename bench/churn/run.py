#!/usr/bin/env python3
"""bench/churn: does the daemon stay clean while containers come and go?

Real Docker containers of a private engine are created, started, left to run
a moment, stopped and removed, --cycles times, --parallel at once, under
`memext daemon`; a third of them are selected critical, the rest extend. Each
container allocates a little memory and then sleeps, so that the daemon tracks
it, may push it out (to a swap file the bench sets up with `memext tiers`, as
on a node), and must drop it when it goes. Before the first cycle
(after a warm-up) and after the last one (once the daemon has seen every
container go), the daemon's own figures are read from the host:

  tracked contexts   `memext status --json` from the daemon's socket
  ledger entries     records in STATE_DIR/daemon.json + daemon.journal (knobs it owns)
  open fds, RSS      /proc/PID/fd and /proc/PID/status of the daemon
  errors, warnings   its JSON log (level ERROR / WARN)

Targets (issue 17): zero daemon errors; tracked contexts, ledger entries and
open fds back where they started, RSS within 1 MiB. A benchmark: it measures
and prints; it asserts nothing. Everything it starts is removed again, also on
Ctrl-C.
"""
import argparse
import concurrent.futures
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import memextbench as mb  # noqa: E402

PARENT = "/memext-bench-churn"
ENGINE = mb.DockerEngine(os.environ.get("MEMEXT_ENGINE_DIR", "/var/tmp/memext-dockerd-churn"), PARENT)
# Allocates and touches MiB of memory, then sleeps until stopped.
HOLD = "python3 -c 'import time,sys; b=bytearray({mib}<<20); [b.__setitem__(i,1) for i in range(0,len(b),4096)]; time.sleep(3600)'"


def cycle(i, a):
    # The run's pid in the name: a run stopped mid-`docker run` can leave a
    # container in the engine's state that a later run must not collide with.
    name = f"churn-{'crit' if i % 3 == 0 else 'ext'}-{os.getpid()}-{i}"
    ENGINE.docker("run", "-d", "--name", name, ENGINE.IMAGE, "sh", "-c", HOLD.format(mib=a.mib))
    time.sleep(a.hold)
    ENGINE.docker("stop", "-t", "1", name)
    ENGINE.docker("rm", name)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cycles", type=int, default=1000, help="containers created and removed (default 1000)")
    ap.add_argument("--parallel", type=int, default=4, help="cycles at once (default 4)")
    ap.add_argument("--hold", type=float, default=2.0, help="seconds each container runs (default 2)")
    ap.add_argument("--mib", type=int, default=16, help="memory each container touches (default 16)")
    ap.add_argument("--smoke", action="store_true", help="12 cycles, for the test suite")
    a = mb.parse_bench_args(ap, "churn", "cgroups, Docker")
    if a.smoke:
        a.cycles, a.parallel, a.hold, a.mib = 12, 3, 1.0, 8
    out = a.out
    cleanup, work = mb.bench_workspace("churn", a)
    try:
        mb.make_cgroup(PARENT, cleanup)
        mb.log("starting the private Docker engine")
        ENGINE.start(cleanup)
        cleanup.push("containers", lambda: [ENGINE.docker("rm", "-f", c, check=False)
                                            for c in ENGINE.docker("ps", "-aq", check=False).split()])
        cfg = os.path.join(work, "memext.toml")
        state = os.path.join(work, "state")
        with open(cfg, "w") as f:
            f.write(f'[host]\nstate_dir = "{state}"\n\n'
                    f'[[select]]\nname = "churn-crit-*"\nclass = "critical"\n\n'
                    f'[[select]]\ncgroup = "{PARENT}/*"\nclass = "extend"\n\n'
                    f'[class.extend]\nidle_after = "1s"\nfloor = "4MiB"\n\n'
                    f'[runtimes]\ndocker_roots = ["{ENGINE.dir}/root"]\n\n'
                    f'[daemon]\ncapacity = "1GiB"\nsocket = "{work}/memext.sock"\n\n'
                    f'[[tiers.swapfile]]\npath = "{work}/swap0"\nsize = "2GiB"\npriority = 10\n')
        mb.memext(["--config", cfg, "tiers", "up"], check=True, capture_output=True)
        cleanup.push("tiers", lambda: mb.memext(["--config", cfg, "tiers", "down"], capture_output=True))
        log = os.path.join(out, "memext-daemon.log")
        pid = mb.start_daemon(cfg, log, cleanup).pid
        time.sleep(3)  # start-up: sockets, the first ticks
        before = mb.daemon_figures(pid, cfg, state)
        mb.log(f"daemon {pid} before: {before}")
        t0, done, failed = time.time(), 0, 0
        with concurrent.futures.ThreadPoolExecutor(a.parallel) as pool:
            for f in concurrent.futures.as_completed([pool.submit(cycle, i, a) for i in range(a.cycles)]):
                done += 1
                if f.exception():
                    failed += 1
                    mb.log(f"  cycle failed: {f.exception()}")
                if done % max(1, a.cycles // 20) == 0 or done == a.cycles:
                    now = mb.daemon_figures(pid, cfg, state)
                    mb.log(f"  {done}/{a.cycles} cycles in {time.time() - t0:.0f} s; daemon: {now}")
        time.sleep(4)  # the daemon sees the last ones go
        after = mb.daemon_figures(pid, cfg, state)
        problems = mb.daemon_problems(log)
        res = {"parameters": vars(a), "machine": mb.machine_facts(), "seconds": time.time() - t0,
               "cycles_failed": failed, "before": before, "after": after,
               "daemon_warnings_and_errors": problems}
        mb.write_json(os.path.join(out, "results.json"), res)
    finally:
        cleanup.run()
    errors = [p for p in problems if p.get("level") == "ERROR"]
    print(f"\nbench/churn: {a.cycles} containers created, run {a.hold} s, stopped and removed, "
          f"{a.parallel} at once, in {res['seconds']:.0f} s ({failed} cycle(s) failed)")
    print(f"{'':<20} {'before':>10} {'after':>10}")
    for k in ("tracked", "ledger", "fds", "rss_kib"):
        print(f"{k:<20} {str(before[k]):>10} {str(after[k]):>10}")
    print(f"daemon errors: {len(errors)}, warnings: {len(problems) - len(errors)}")
    for p in problems[:10]:
        print(f"  {p.get('level')}: {p.get('message')}")
    ok = (not errors and after["tracked"] == before["tracked"] and after["ledger"] == before["ledger"]
          and after["fds"] == before["fds"] and after["rss_kib"] - before["rss_kib"] <= 1024)
    print(f"targets (no errors; tracked, ledger, fds back; RSS within 1 MiB): {'met' if ok else 'MISSED'}")
    print(f"results: {out}")


if __name__ == "__main__":
    main()
