#!/usr/bin/env python3
"""Does one context's swap-in charge another's memory? What a kernel wake
event of a pushed-out context is worth when its neighbour wakes.

Two v1 memory cgroups, A and B, each with one sleeping process holding
--mib MiB of private anonymous memory. Both are swapped out by writing their
limits down to 1 MiB (memext's floor in bench/scale), either one after the
other (`apart`) or at once from two threads (`together`: their swap slots
interleave, as when memext's mover, its reclaimer and the kernel push
several contexts out at the same time). Then B gets what memext arms on a
pushed-out context (an eventfd on `memory.pressure_level` at `low` and a
usage threshold 512 KiB above its usage), A touches its whole heap, and the
bench reports, for B, the pages the kernel read in and charged to it
(`pgpgin`), the faults B's process took (`pgfault`, `pgmajfault`) and how
often B's event fired.

With swap on a rotational device (`/sys/block/*/queue/rotational` = 1, this
machine's virtio disk) the kernel reads swap ahead by slot clusters
(`vm.page-cluster`), not along the faulting process's address space, and
charges each page read to the cgroup that swapped it out. A benchmark: it
measures and prints. Its swap file and cgroups are removed at the end, also
on Ctrl-C.

  sudo python3 bench/scale/readahead.py [--mib 64] [--rounds 3]
"""
import argparse
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import memextbench as mb  # noqa: E402

MIB = 1 << 20
V1 = "/sys/fs/cgroup/memory"
PARENT = "/memext-bench-readahead"
SLEEPER = r'''
import mmap, sys
n = int(sys.argv[1])
m = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
for i in range(0, n, 4096):
    m[i] = 1
print("ready", flush=True)
for _ in sys.stdin:
    s = sum(m[i] for i in range(0, n, 4096))
    print("touched", s, flush=True)
'''


def stat(path, keys):
    with open(f"{V1}{path}/memory.stat") as f:
        s = dict(line.split() for line in f)
    return {k: int(s[k]) for k in keys}


def write(path, value):
    with open(path, "w") as f:
        f.write(str(value))


def arm(path):
    """memext's wake event on cgroup `path`: one eventfd, pressure level
    `low` and a usage threshold 512 KiB above the usage now. Returns the
    descriptors (the eventfd first)."""
    efd = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
    level = os.open(f"{V1}{path}/memory.pressure_level", os.O_RDONLY | os.O_CLOEXEC)
    usage = os.open(f"{V1}{path}/memory.usage_in_bytes", os.O_RDONLY | os.O_CLOEXEC)
    with open(f"{V1}{path}/memory.usage_in_bytes") as f:
        now = int(f.read())
    write(f"{V1}{path}/cgroup.event_control", f"{efd} {level} low")
    write(f"{V1}{path}/cgroup.event_control", f"{efd} {usage} {now + 512 * 1024}")
    return [efd, level, usage]


def one(order, a, cleanup):
    mark = cleanup.mark()
    try:
        paths = [f"{PARENT}/a", f"{PARENT}/b"]
        sleepers = []
        for path in paths:
            mb.make_cgroup(path, cleanup)
            p = mb.spawn_in(path, [sys.executable, "-c", SLEEPER, str(a.mib * MIB)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            cleanup.push(f"sleeper {p.pid}", lambda p=p: (p.kill(), p.wait()))
            sleepers.append(p)
        for p in sleepers:
            if p.stdout.readline().split() != ["ready"]:
                raise RuntimeError(f"sleeper {p.pid} did not start")

        def lower(path):
            write(f"{V1}{path}/memory.limit_in_bytes", MIB)
        if order == "together":
            threads = [threading.Thread(target=lower, args=(p,)) for p in paths]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        else:
            for p in paths:
                lower(p)
        time.sleep(1)
        fds = arm(paths[1])
        cleanup.push("eventfd", lambda: [os.close(fd) for fd in fds])
        keys = ("pgpgin", "pgfault", "pgmajfault")
        before = stat(paths[1], keys)
        t0 = time.time()
        sleepers[0].stdin.write("touch\n")
        sleepers[0].stdin.flush()
        sleepers[0].stdout.readline()
        touch_s = time.time() - t0
        time.sleep(0.5)  # the kernel's pressure work runs after the reclaim
        after = stat(paths[1], keys)
        try:
            fired = os.eventfd_read(fds[0])
        except BlockingIOError:
            fired = 0
        row = {"order": order, "mib": a.mib, "a_touch_s": round(touch_s, 3), "b_fired": fired,
               **{f"b_{k}": after[k] - before[k] for k in keys}}
        row["b_charged_mib"] = round(row["b_pgpgin"] * 4096 / MIB, 1)
        return row
    finally:
        cleanup.run(mark)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mib", type=int, default=64, help="each sleeper's heap, MiB (default 64)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of both orders, rotated (default 3)")
    ap.add_argument("--out", default=None, help="results directory (default results/readahead-TIMESTAMP)")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench/scale/readahead.py needs root (cgroups, swap)")
    a.out = os.path.abspath(a.out or os.path.join(mb.ROOT, "results", time.strftime("readahead-%Y%m%d-%H%M%S")))
    if a.mib < 8 or a.rounds < 1:
        ap.error("--mib >= 8, --rounds >= 1")
    if not os.path.isdir(V1):
        sys.exit("bench/scale/readahead.py needs cgroup v1's memory controller")
    os.makedirs(a.out, exist_ok=True)
    cleanup = mb.Cleanup()
    work = mb.work_dir("readahead", cleanup)
    rows = []
    try:
        swap = f"{work}/swap"
        subprocess.run(["fallocate", "-l", f"{4 * a.mib}M", swap], check=True)
        os.chmod(swap, 0o600)
        subprocess.run(["mkswap", swap], check=True, capture_output=True)
        subprocess.run(["swapon", swap], check=True)
        cleanup.push("swapoff", lambda: subprocess.run(["swapoff", swap], check=True))
        orders = ["apart", "together"]
        for r in range(a.rounds):
            for order in orders[r % 2:] + orders[:r % 2]:
                row = one(order, a, cleanup) | {"round": r}
                mb.log(f"round {r} {order}: B charged {row['b_charged_mib']} MiB, its event fired "
                       f"{row['b_fired']} times, its process took {row['b_pgfault']} faults")
                rows.append(row)
        facts = mb.machine_facts()
        facts["page_cluster"] = open("/proc/sys/vm/page-cluster").read().strip()
        facts["vma_ra_enabled"] = open("/sys/kernel/mm/swap/vma_ra_enabled").read().strip()
        dev = subprocess.run(["findmnt", "-no", "SOURCE", "--target", work],
                             capture_output=True, text=True).stdout.strip()
        facts["swap_device"] = dev
        mb.write_json(os.path.join(a.out, "results.json"), {"parameters": vars(a), "machine": facts, "rows": rows})
    finally:
        cleanup.run()
    print(f"\nB after A touched its {a.mib} MiB (B's process asleep throughout)")
    print(f"{'round':>5} {'order':>9} {'B charged MiB':>14} {'B event fired':>14} {'B faults':>9} {'B major':>8}")
    for r in rows:
        print(f"{r['round']:>5} {r['order']:>9} {r['b_charged_mib']:>14} {r['b_fired']:>14} {r['b_pgfault']:>9} {r['b_pgmajfault']:>8}")
    print(f"results: {a.out}")


if __name__ == "__main__":
    main()
