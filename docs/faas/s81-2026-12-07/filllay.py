#!/usr/bin/env python3
"""How a capped host's fill lays its swap slots, and what that costs a
read-back, with the swap file's area taken as rotational (as this virtio disk
says it is) or as solid state (the disk's flag set to 0 only for the swapon,
then put back: the kernel reads the flag once, at swapon).

8 processes of 48 MiB (every page distinct, written in address order) start
one after another, each in its own child of a parent memory cgroup (v1)
capped at a quarter of their memory: the later ones reclaim at the cap as
they write, as bench/faas' functions do when they start. Then, with the cap
lifted, each process's swapped pages are counted in runs of consecutive swap
slots (either direction, address order), and its heap is read back: the odd
ones by their own touch alone (the kernel's fault path and read-ahead), the
even ones as memext does (process_madvise MADV_WILLNEED over the heap, then
the touch). Prints one line per way and round.

filllay.py [ROUNDS [WAY,...]]   WAY: rot, ss, relay (root; removes all it made)
relay: the fill as rot, then per process: read back, MADV_COLLAPSE, MADV_PAGEOUT, read back again."""
import ctypes
import os
import struct
import subprocess
import sys
import time

MIB, N, HEAP = 1 << 20, 8, 48
CG = "/sys/fs/cgroup/memory/memext-s81-lay"
SWAP = "/var/tmp/s81/lay.swap"
CHILD = ("import sys,time\nb=bytearray(%d)\nfor i in range(0,len(b),4096): b[i:i+8]=(i+1).to_bytes(8,'little')\n"
         "sys.stdout.write('ok\\n'); sys.stdout.flush()\n"
         "while sys.stdin.readline():\n t=time.monotonic(); s=sum(memoryview(b)[::4096])\n"
         " sys.stdout.write('%%.6f\\n' %% (time.monotonic()-t)); sys.stdout.flush()\n" % (HEAP * MIB))


def w(path, v):
    with open(path, "w") as f:
        f.write(str(v))


def disk_queue(path):
    """The rotational flag of the disk holding `path` (its partition's parent)."""
    st = os.stat(path)
    dev = os.path.realpath(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
    if os.path.exists(os.path.join(dev, "partition")):
        dev = os.path.dirname(dev)
    return os.path.join(dev, "queue/rotational")


def swapon(solid):
    subprocess.run(["fallocate", "-l", "1G", SWAP], check=True)
    os.chmod(SWAP, 0o600)
    subprocess.run(["mkswap", "-q", SWAP], check=True)
    flag = disk_queue(SWAP)
    old = open(flag).read().strip()
    try:
        if solid:
            w(flag, 0)
        subprocess.run(["swapon", SWAP], check=True)
    finally:
        w(flag, old)


def heap_span(pid):
    spans = []
    for line in open(f"/proc/{pid}/maps").read().splitlines():
        f = line.split()
        if "w" in f[1] and (len(f) == 5 or f[5] == "[heap]"):
            lo, hi = (int(x, 16) for x in f[0].split("-"))
            spans.append((hi - lo, lo))
    size, lo = max(spans)
    return lo, size


WILLNEED, PAGEOUT, COLLAPSE = 3, 21, 25


def advise(pid, advice):
    """process_madvise(ADVICE) over the process's heap; returns the seconds it took."""
    lo, size = heap_span(pid)
    lo2 = (lo + (2 * MIB - 1)) // (2 * MIB) * (2 * MIB) if advice == COLLAPSE else lo
    size2 = (lo + size - lo2) // (2 * MIB) * (2 * MIB) if advice == COLLAPSE else size
    libc = ctypes.CDLL(None, use_errno=True)
    iov = (ctypes.c_void_p * 2)(lo2, size2)
    fd = os.pidfd_open(pid)
    t = time.monotonic()
    try:
        if libc.syscall(440, fd, iov, 1, advice, 0) < 0:  # process_madvise(pidfd, iov, 1, advice, 0)
            raise OSError(ctypes.get_errno(), f"process_madvise {advice}")
    finally:
        os.close(fd)
    return time.monotonic() - t


def touch(p):
    """The process reads its heap; returns the seconds it said it took."""
    p.stdin.write(b"go\n")
    p.stdin.flush()
    return float(p.stdout.readline())


def runs(pid):
    lo, size = heap_span(pid)
    offs = []
    with open(f"/proc/{pid}/pagemap", "rb") as pm:
        pm.seek(lo // 4096 * 8)
        data = pm.read(size // 4096 * 8)
    for i in range(len(data) // 8):
        e = struct.unpack_from("<Q", data, i * 8)[0]
        if e >> 62 & 1:
            offs.append(e >> 5 & ((1 << 50) - 1))
    return len(offs), (1 + sum(1 for a, b in zip(offs, offs[1:]) if abs(b - a) != 1)) if offs else 0


def relay(procs):
    """Session 81's question: does a heap collapsed into huge pages
    (MADV_COLLAPSE, which frees the old pages' swap slots) and paged out
    again lie in one run? Per process: read back (WILLNEED + touch), collapse,
    page out, read back again."""
    out = []
    for p in procs:
        a0, r0 = runs(p.pid)
        t = time.monotonic()
        advise(p.pid, WILLNEED)
        touch(p)
        before = a0 * 4096 / MIB / (time.monotonic() - t)
        collapse = advise(p.pid, COLLAPSE)
        advise(p.pid, PAGEOUT)
        time.sleep(0.5)
        a1, r1 = runs(p.pid)
        t = time.monotonic()
        advise(p.pid, WILLNEED)
        touch(p)
        after = a1 * 4096 / MIB / (time.monotonic() - t)
        out.append((a0 / max(r0, 1), before, collapse * 1000, a1 / max(r1, 1), a1 * 4096 // MIB, after))
    print("relay: pages a run / read-back MiB/s before -> collapse ms -> pages a run / MiB paged out / read-back after: "
          + "; ".join(f"{a:.1f}/{b:.0f} -> {c:.0f} -> {d:.0f}/{e}/{f:.0f}" for a, b, c, d, e, f in out), flush=True)


def one(way):
    swapon(way == "ss")
    procs = []
    try:
        os.mkdir(CG)
        w(f"{CG}/memory.limit_in_bytes", N * (HEAP + 8) * MIB // 4)
        t0 = time.monotonic()
        for i in range(N):
            d = f"{CG}/c{i}"
            os.mkdir(d)
            p = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 preexec_fn=lambda d=d: w(f"{d}/cgroup.procs", os.getpid()))
            p.stdout.readline()
            procs.append(p)
        fill = time.monotonic() - t0
        w(f"{CG}/memory.limit_in_bytes", -1)
        n = r = 0
        touch, willneed = [], []
        dead = [k for k, p in enumerate(procs) if p.poll() is not None]
        if dead:
            oom = open(f"{CG}/memory.oom_control").read().split()
            print(f"{way:4s}: processes {dead} died in the fill (exit {[procs[k].returncode for k in dead]}; "
                  f"oom_control {' '.join(oom)})", flush=True)
            return
        if way == "relay":
            relay(procs)
            return
        for k, p in enumerate(procs):
            a, b = runs(p.pid)
            n += a
            r += b
            t = time.monotonic()
            if k % 2 == 0:
                advise(p.pid, WILLNEED)
            touch(p)
            (willneed if k % 2 == 0 else touch).append((a * 4096 / MIB) / (time.monotonic() - t))
        print(f"{way:4s}: fill {fill:.1f} s, {n} pages swapped ({n * 4 // 1024} MiB), {n / max(r, 1):.1f} pages a run; "
              f"read-back MiB/s: WILLNEED+touch {' '.join(f'{x:.0f}' for x in willneed)}, "
              f"touch alone {' '.join(f'{x:.0f}' for x in touch)}", flush=True)
    finally:
        remove(procs, CG, N, SWAP)


def remove(procs, cg, n, swap):
    """Ends `procs`, removes `cg` and its children c0..c{n-1}, swaps `swap` off and deletes it."""
    for p in procs:
        p.kill()
        p.wait()
    for d in [f"{cg}/c{i}" for i in range(n)] + [cg]:
        try:
            os.rmdir(d)
        except OSError:
            pass
    subprocess.run(["swapoff", swap])
    os.unlink(swap)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    ways = sys.argv[2].split(",") if len(sys.argv) > 2 else ["rot", "ss"]
    for k in range(rounds):
        for way in ways[k % len(ways):] + ways[:k % len(ways)]:
            one(way)


if __name__ == "__main__":
    main()
