#!/usr/bin/env python3
"""Does a page-out by address free a cgroup's charge? One process writes a
48 MiB heap in a v1 memory cgroup (a fresh 1 GiB swap file on); its heap is
paged out with process_madvise(MADV_PAGEOUT); the cgroup's usage and
memory.stat are read right after and every 0.2 s for a second; then its
limit is written to 8 MiB (a reclaim), and read again. Root; removes all
it made. Usage: pocheck.py"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "s81-2026-12-07"))
import filllay as f1  # noqa: E402  (w, advise, remove, CHILD, PAGEOUT)

MIB = 1 << 20
CG = "/sys/fs/cgroup/memory/memext-s82-po"
SWAP = "/var/tmp/s82/po.swap"
KEYS = ("rss", "cache", "swap", "writeback", "inactive_anon", "active_anon")


def usage():
    return int(open(f"{CG}/memory.usage_in_bytes").read()) // MIB


def stat():
    d = {}
    for line in open(f"{CG}/memory.stat"):
        k, v = line.split()
        if k in KEYS:
            d[k] = int(v) // MIB
    return d


def main():
    os.makedirs(os.path.dirname(SWAP), exist_ok=True)
    subprocess.run(["fallocate", "-l", "1G", SWAP], check=True)
    os.chmod(SWAP, 0o600)
    subprocess.run(["mkswap", "-q", SWAP], check=True)
    subprocess.run(["swapon", SWAP], check=True)
    p = None
    try:
        os.mkdir(CG)
        p = subprocess.Popen([sys.executable, "-c", f1.CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             preexec_fn=lambda: f1.w(f"{CG}/cgroup.procs", os.getpid()))
        p.stdout.readline()
        print("after start: usage MiB", usage(), stat())
        dt = f1.advise(p.pid, f1.PAGEOUT)
        print(f"after MADV_PAGEOUT ({dt * 1000:.0f} ms): usage MiB", usage(), stat())
        for _ in range(5):
            time.sleep(0.2)
            print("  +0.2 s: usage MiB", usage(), stat())
        t = time.monotonic()
        f1.w(f"{CG}/memory.limit_in_bytes", 8 * MIB)
        print(f"limit written to 8 MiB ({(time.monotonic() - t) * 1000:.0f} ms): usage MiB", usage(), stat())
    finally:
        f1.remove([p] if p else [], CG, 0, SWAP)


if __name__ == "__main__":
    main()
