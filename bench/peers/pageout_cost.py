#!/usr/bin/env python3
"""What swapping out a sleeping process's heap costs, by the way it is done:
the CPU time of whoever does it, per GiB, and the TLB shootdowns the machine
takes meanwhile (interrupts on the other CPUs, from /proc/interrupts).

  pageout   the process pages itself out: madvise(MADV_PAGEOUT)
  pmadvise  another process does it: process_madvise(MADV_PAGEOUT) in 16 MiB
            batches (memext's mover and `daemon.reclaim = "page-out"`)
  limit     another process writes the v1 memory limit down to 16 MiB at once
            (the kernel reclaims in the writer)
  limit8    the same in 8 MiB steps (memext's reclaimer, `background`)
  charge    the process fills a second heap under a limit with room for one:
            its own charges reclaim the first (minus `touch`: the same fill
            with room for both)

The heap is private anonymous memory, half random bytes and half zeros per
page, filled and then left asleep; with `--running` the process spins on a
CPU instead while another swaps its heap out (pmadvise, limit, limit8 only):
what paging out a context that runs costs. A swap file of its own is set up for the
run and removed after, as is the v1 memory cgroup it uses; methods rotate
each round. Needs root and cgroup v1's memory controller.

  sudo python3 bench/peers/pageout_cost.py [--mib 256] [--rounds 3] [--running]
"""
import argparse
import contextlib
import ctypes
import mmap
import os
import resource
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from server import tlb_shootdowns  # noqa: E402

MIB = 1 << 20
CG = "/sys/fs/cgroup/memory/memext-pageout-cost"
MADV_PAGEOUT = 21
SYS_PIDFD_OPEN, SYS_PROCESS_MADVISE = 434, 440
METHODS = ("pageout", "pmadvise", "limit", "limit8", "charge", "touch")
IN_CGROUP = ("limit", "limit8", "charge", "touch")
BY_ANOTHER = ("pmadvise", "limit", "limit8")  # done to the process: it may run meanwhile


def write(path, value):
    with open(path, "w") as f:
        f.write(str(value))


def stime():
    return resource.getrusage(resource.RUSAGE_SELF).ru_stime


class Iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


def heap(size):
    m = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE)
    page = os.urandom(2048) + bytes(2048)
    for off in range(0, size, 4096):
        m[off:off + 4096] = page
    view = ctypes.c_char.from_buffer(m)
    addr = ctypes.addressof(view)
    del view
    return m, addr


def spin_until(fd):
    """Runs on a CPU (one thread, no memory touched) until `fd` has a byte."""
    os.set_blocking(fd, False)
    while True:
        try:
            if os.read(fd, 1):
                return
        except BlockingIOError:
            pass


def child(method, size, running, to_parent, from_parent):
    """Fills its heap, says where it is, sleeps (or spins, `running`) until
    told; then does its part of `method` (if any) and reports its own CPU
    seconds for it."""
    if method in IN_CGROUP:
        write(f"{CG}/cgroup.procs", os.getpid())
    m, addr = heap(size)
    os.write(to_parent, str(addr).encode().ljust(32))
    if running:
        spin_until(from_parent)
        os.set_blocking(from_parent, True)
    else:
        os.read(from_parent, 1)
    spent = 0.0
    if method == "pageout":
        t0 = stime()
        m.madvise(MADV_PAGEOUT)
        spent = stime() - t0
    elif method in ("charge", "touch"):
        m2 = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE)
        t0 = stime()
        for off in range(0, size, 4096):
            m2[off] = 1
        spent = stime() - t0
    os.write(to_parent, f"{spent:.6f}".encode().ljust(32))
    os.read(from_parent, 1)


def process_madvise(pid, addr, size, advice=MADV_PAGEOUT):
    """`advice` on another process's range, in 16 MiB batches (memext's mover's way)."""
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = libc.syscall(SYS_PIDFD_OPEN, pid, 0)
    if pidfd < 0:
        raise OSError(ctypes.get_errno(), "pidfd_open")
    try:
        for off in range(0, size, 16 * MIB):
            iov = Iovec(addr + off, min(16 * MIB, size - off))
            if libc.syscall(SYS_PROCESS_MADVISE, pidfd, ctypes.byref(iov), 1, advice, 0) < 0:
                raise OSError(ctypes.get_errno(), "process_madvise")
    finally:
        os.close(pidfd)


def fork(child_main, *args):
    """child_main(*args, to_parent, from_parent) in a child process:
    (its pid, the parent's ends (from_child, to_child), every pipe end)."""
    up_r, up_w = os.pipe()
    down_r, down_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            child_main(*args, up_w, down_r)
        finally:
            os._exit(0)
    return pid, (up_r, down_w), (up_r, up_w, down_r, down_w)


@contextlib.contextmanager
def own_swap(name, nbytes, cgroup):
    """A swap file of `nbytes` and the v1 memory cgroup `cgroup`, for the
    run; both removed after."""
    swap = f"/var/tmp/{name}-{os.getpid()}.swap"
    subprocess.run(["fallocate", "-l", str(nbytes), swap], check=True)
    try:
        os.chmod(swap, 0o600)
        subprocess.run(["mkswap", swap], check=True, capture_output=True)
        subprocess.run(["swapon", swap], check=True)
        os.makedirs(cgroup, exist_ok=True)
        yield
    finally:
        subprocess.run(["swapoff", swap], capture_output=True)
        os.remove(swap)
        if os.path.isdir(cgroup):
            os.rmdir(cgroup)


def one(method, size, running=False):
    """(CPU seconds of whoever swapped the heap out, TLB shootdowns);
    `running`: the process spins meanwhile (its own CPU is not counted)."""
    pid, (up_r, down_w), fds = fork(child, method, size, running)
    try:
        addr = int(os.read(up_r, 32).decode())
        time.sleep(0.5)  # asleep, or spinning
        shot = tlb_shootdowns()
        t0 = stime()
        if method == "pmadvise":
            process_madvise(pid, addr, size)
        elif method == "limit":
            write(f"{CG}/memory.limit_in_bytes", 16 * MIB)
        elif method == "limit8":
            at = int(open(f"{CG}/memory.usage_in_bytes").read())
            while at > 16 * MIB:
                at = max(16 * MIB, at - 8 * MIB)
                write(f"{CG}/memory.limit_in_bytes", at)
        elif method == "charge":
            write(f"{CG}/memory.limit_in_bytes", size + 16 * MIB)
        spent = stime() - t0
        os.write(down_w, b"g")
        spent += float(os.read(up_r, 32).decode())
        return spent, tlb_shootdowns() - shot
    finally:
        os.write(down_w, b"x")
        os.waitpid(pid, 0)
        for fd in fds:
            os.close(fd)
        if method in IN_CGROUP:
            write(f"{CG}/memory.limit_in_bytes", -1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mib", type=int, default=256, help="heap size (default 256)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of every method (default 3)")
    ap.add_argument("--running", action="store_true",
                    help="the process spins on a CPU while another swaps it out (pmadvise, limit, limit8)")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("pageout_cost.py needs root (a swap file, a memory cgroup)")
    if not os.path.isdir(os.path.dirname(CG)):
        sys.exit("pageout_cost.py needs cgroup v1's memory controller at /sys/fs/cgroup/memory")
    size = a.mib * MIB
    with own_swap("memext-pageout-cost", 4 * size, CG):
        methods = BY_ANOTHER if a.running else METHODS
        state = "spinning" if a.running else "asleep"
        print(f"{a.mib} MiB heap, {state}, {a.rounds} rounds; CPU-seconds per GiB swapped out, TLB shootdowns per MiB")
        for r in range(a.rounds):
            for method in methods[r % len(methods):] + methods[:r % len(methods)]:
                spent, shot = one(method, size, a.running)
                print(f"  {method:9s} {spent / (size / (1 << 30)):6.2f} CPU-s/GiB  {shot / a.mib:7.1f} shootdowns/MiB",
                      flush=True)


if __name__ == "__main__":
    main()
