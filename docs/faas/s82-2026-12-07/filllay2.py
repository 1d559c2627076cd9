#!/usr/bin/env python3
"""Who should lay a capped host's fill? Session 81's `filllay.py` with more
processes (as bench/faas has many functions, the cap's reclaim takes a few
pages from each at a time) and three ways to fill:

  cap      each process starts under the parent's cap alone (bench/faas'
           default: the kernel's reclaim at the cap lays the slots);
  own      as cap, and each child also has its own limit (LIMIT MiB) from
           its start: the reclaim at that limit takes its own pages only;
  pageout  no cap during the fill: each process, once started, is paged out
           by address (process_madvise MADV_PAGEOUT) and its child's limit
           lowered to LIMIT MiB (what memext does in `run.py --fill memext`).

Then, as in filllay.py: runs of consecutive swap slots per heap, and each
heap read back (MADV_WILLNEED, then its touch). One line per way and round.

filllay2.py [ROUNDS [WAY,...] [N] [LIMIT]]   (root; removes all it made)"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "s81-2026-12-07"))
import filllay as f1  # noqa: E402  (w, advise, touch, runs, remove, CHILD)

MIB, HEAP = 1 << 20, 48
CG = "/sys/fs/cgroup/memory/memext-s82-lay"
SWAP = "/var/tmp/s82/lay.swap"


def one(way, n, limit):
    subprocess.run(["fallocate", "-l", "3G", SWAP], check=True)
    os.chmod(SWAP, 0o600)
    subprocess.run(["mkswap", "-q", SWAP], check=True)
    subprocess.run(["swapon", SWAP], check=True)
    procs = []
    try:
        os.mkdir(CG)
        cap = n * (HEAP + 8) * MIB // 4
        if way != "pageout":
            f1.w(f"{CG}/memory.limit_in_bytes", cap)
        t0 = time.monotonic()
        for i in range(n):
            d = f"{CG}/c{i}"
            os.mkdir(d)
            if way == "own":
                f1.w(f"{d}/memory.limit_in_bytes", limit * MIB)
            p = subprocess.Popen([sys.executable, "-c", f1.CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 preexec_fn=lambda d=d: f1.w(f"{d}/cgroup.procs", os.getpid()))
            p.stdout.readline()
            if way == "pageout":
                f1.advise(p.pid, f1.PAGEOUT)
                f1.w(f"{d}/memory.limit_in_bytes", limit * MIB)
            procs.append(p)
        fill = time.monotonic() - t0
        hits = int(open(f"{CG}/memory.failcnt").read())
        for i in range(n):
            f1.w(f"{CG}/c{i}/memory.limit_in_bytes", -1)
        f1.w(f"{CG}/memory.limit_in_bytes", -1)
        dead = [k for k, p in enumerate(procs) if p.poll() is not None]
        if dead:
            print(f"{way:7s}: processes {dead} died in the fill", flush=True)
            return
        pages = nruns = 0
        rates = []
        for p in procs:
            a, b = f1.runs(p.pid)
            pages += a
            nruns += b
            t = time.monotonic()
            f1.advise(p.pid, f1.WILLNEED)
            f1.touch(p)
            rates.append((a * 4096 / MIB) / (time.monotonic() - t))
        rates.sort()
        print(f"{way:7s}: {n} x {HEAP} MiB, fill {fill:.1f} s, parent cap hits {hits}, {pages * 4 // 1024} MiB swapped, "
              f"{pages / max(nruns, 1):.1f} pages a run; read-back MiB/s median {rates[len(rates) // 2]:.0f} "
              f"(min {rates[0]:.0f}, max {rates[-1]:.0f})", flush=True)
    finally:
        f1.remove(procs, CG, n, SWAP)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    ways = sys.argv[2].split(",") if len(sys.argv) > 2 else ["cap", "own", "pageout"]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 24
    limit = int(sys.argv[4]) if len(sys.argv) > 4 else 8
    for k in range(rounds):
        for way in ways[k % len(ways):] + ways[:k % len(ways)]:
            one(way, n, limit)


if __name__ == "__main__":
    main()
