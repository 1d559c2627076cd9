#!/usr/bin/env python3
"""What bringing a paged-out heap back costs, by the way it is done: the CPU
time of everyone who takes part (the process touching its heap, and whoever
reads it back for it), per GiB, the wall time, and the TLB shootdowns the
machine takes meanwhile. pageout_cost.py's other half.

  fault     the process touches its heap (one write per page, as bench/peers'
            burst noise does): each missing page a major fault, the kernel's
            swap readahead (vm.page-cluster) as the host has it
  willneed  the process first asks for all of it, madvise(MADV_WILLNEED),
            then touches it
  pmadvise  another process reads it back, process_madvise(MADV_WILLNEED) in
            16 MiB batches (memext's mover), until 95% of it is in the swap
            cache (or the cache stops growing); then the process touches it
  populate  the process maps it all in one call, madvise(MADV_POPULATE_WRITE),
            then touches it

The heap is private anonymous memory, half random bytes and half zeros per
page, filled, paged out by its own madvise(MADV_PAGEOUT) and left asleep.
A page-out leaves the pages written to swap but still in the swap cache
until reclaim frees them (this kernel: the whole heap stays in SwapCached),
so the process's v1 memory cgroup is then squeezed to 16 MiB once to free
them, as the next charge at a cap would, and let loose again. A swap file
and the cgroup of its own are set up for the run and removed after;
methods rotate each round. Needs root and cgroup v1's memory controller.

  sudo python3 bench/peers/swapin_cost.py [--mib 256] [--rounds 3]
"""
import argparse
import ctypes
import os
import resource
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from pageout_cost import MADV_PAGEOUT, fork, heap, own_swap, process_madvise, write  # noqa: E402
from server import tlb_shootdowns  # noqa: E402

MIB = 1 << 20
CG = "/sys/fs/cgroup/memory/memext-swapin-cost"
MADV_WILLNEED, MADV_POPULATE_WRITE = 3, 23
METHODS = ("fault", "willneed", "pmadvise", "populate")
LIBC = ctypes.CDLL(None, use_errno=True)


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def swap_cached_pages():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("SwapCached:"):
                return int(line.split()[1]) * 1024 // 4096
    return 0


def child(method, size, to_parent, from_parent):
    """Fills its heap, pages it out, says where it is, sleeps until told;
    then does its part of `method` and reports its CPU seconds for it."""
    write(f"{CG}/cgroup.procs", os.getpid())
    m, addr = heap(size)
    m.madvise(MADV_PAGEOUT)
    os.write(to_parent, str(addr).encode().ljust(32))
    os.read(from_parent, 1)
    t0 = cpu()
    if method == "willneed":
        m.madvise(MADV_WILLNEED)
    elif method == "populate":
        if LIBC.madvise(ctypes.c_void_p(addr), ctypes.c_size_t(size), MADV_POPULATE_WRITE) != 0:
            raise OSError(ctypes.get_errno(), "madvise(MADV_POPULATE_WRITE)")
    for off in range(0, size, 4096):
        m[off] = (m[off] + 1) & 0xFF
    spent = cpu() - t0
    os.write(to_parent, f"{spent:.6f} {resource.getrusage(resource.RUSAGE_SELF).ru_majflt}".encode().ljust(32))
    os.read(from_parent, 1)


def read_back(pid, addr, size, deadline=30.0):
    """memext's mover's way: process_madvise(MADV_WILLNEED) in 16 MiB
    batches, then until 95% of the heap is in the swap cache (what the
    squeeze left there counts) or the cache stops growing for 50 ms."""
    process_madvise(pid, addr, size, MADV_WILLNEED)
    end, last, still = time.monotonic() + deadline, -1, time.monotonic()
    while time.monotonic() < end:
        now = swap_cached_pages()
        if now >= 0.95 * size / 4096 or (now == last and time.monotonic() - still > 0.05):
            return
        if now != last:
            last, still = now, time.monotonic()
        time.sleep(0.002)


def one(method, size):
    """(CPU seconds of everyone, wall seconds, TLB shootdowns, the toucher's major faults)."""
    pid, (up_r, down_w), fds = fork(child, method, size)
    done = False
    try:
        addr = int(os.read(up_r, 32).decode())
        time.sleep(0.5)  # asleep, its pages written out
        write(f"{CG}/memory.limit_in_bytes", 16 * MIB)  # the swap cache freed
        write(f"{CG}/memory.limit_in_bytes", -1)
        left = swap_cached_pages() * 4096
        if left > size // 4:
            raise RuntimeError(f"{left // MIB} MiB still in the swap cache after the squeeze")
        shot, t0, wall = tlb_shootdowns(), cpu(), time.monotonic()
        if method == "pmadvise":
            read_back(pid, addr, size)
        spent = cpu() - t0
        os.write(down_w, b"g")
        theirs, majflt = os.read(up_r, 32).decode().split()
        done = True
        return spent + float(theirs), time.monotonic() - wall, tlb_shootdowns() - shot, int(majflt)
    finally:
        if done:
            os.write(down_w, b"x")
        else:
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        for fd in fds:
            os.close(fd)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mib", type=int, default=256, help="heap size (default 256)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of every method (default 3)")
    a = ap.parse_args()
    if a.mib < 64 or a.rounds < 1:
        # The squeeze leaves up to 16 MiB in the swap cache: a quarter of 64.
        ap.error("--mib at least 64, --rounds at least 1")
    if os.geteuid() != 0:
        sys.exit("swapin_cost.py needs root (a swap file, a memory cgroup)")
    if not os.path.isdir(os.path.dirname(CG)):
        sys.exit("swapin_cost.py needs cgroup v1's memory controller at /sys/fs/cgroup/memory")
    size = a.mib * MIB
    with own_swap("memext-swapin-cost", 2 * size, CG):
        print(f"{a.mib} MiB heap, {a.rounds} rounds, vm.page-cluster {open('/proc/sys/vm/page-cluster').read().strip()};"
              " CPU-seconds per GiB brought back (everyone's), wall time, TLB shootdowns per MiB, major faults")
        for r in range(a.rounds):
            for method in METHODS[r % len(METHODS):] + METHODS[:r % len(METHODS)]:
                spent, wall, shot, majflt = one(method, size)
                gib = size / (1 << 30)
                print(f"  {method:9s} {spent / gib:6.2f} CPU-s/GiB  {wall / gib:6.2f} s/GiB  "
                      f"{shot / a.mib:7.1f} shootdowns/MiB  {majflt:7d} major faults", flush=True)

if __name__ == "__main__":
    main()
