#!/usr/bin/env python3
"""Where reclaim puts a cgroup's pages in the swap area: 8 processes of 48
MiB (every page distinct, written in address order), each in its own child
of a parent memory cgroup (v1), a fresh 1 GiB swap file, then their pages
pushed to swap one of three ways, and every process's swapped pages counted
in runs of consecutive swap slots (address order), as slots.py does:
  parent:     the parent's limit lowered to a quarter (the kernel's reclaim
              at the parent, as at a capped host's cap);
  children:   each child's limit lowered to a quarter, one after another (as
              memext's reclaimer lowers one context's limit);
  concurrent: all children's limits lowered at once, one thread each;
  pageout:    three quarters of each heap paged out with process_madvise
              (MADV_PAGEOUT), one process after another (memext's
              `daemon.reclaim = "page-out"`).
reclaimlay.py [ROUNDS [WAY,...]]  (root; removes all it made)"""
import ctypes, os, subprocess, sys, threading
MIB, N, HEAP = 1 << 20, 8, 48
CG = "/sys/fs/cgroup/memory/memext-s46-lay"
SWAP = "/var/tmp/s46/lay.swap"
CHILD = ("import sys,time\nb=bytearray(%d)\nfor i in range(0,len(b),4096): b[i:i+8]=(i+1).to_bytes(8,'little')\n"
         "sys.stdout.write('ok\\n'); sys.stdout.flush(); time.sleep(3600)\n" % (HEAP * MIB))

def w(path, v):
    with open(path, "w") as f:
        f.write(str(v))

def page_out(pid, fraction):
    """MADV_PAGEOUT over the first `fraction` of the process's largest
    private writable mapping (its heap), from outside (process_madvise)."""
    spans = []
    for l in open(f"/proc/{pid}/maps").read().splitlines():
        f = l.split()
        if "w" in f[1] and (len(f) == 5 or f[5] == "[heap]"):
            lo, hi = (int(x, 16) for x in f[0].split("-"))
            spans.append((hi - lo, lo))
    size, lo = max(spans)
    libc = ctypes.CDLL(None, use_errno=True)
    iov = (ctypes.c_void_p * 2)(lo, int(size * fraction) // 4096 * 4096)
    fd = os.pidfd_open(pid)
    try:
        if libc.syscall(440, fd, iov, 1, 21, 0) < 0:  # process_madvise(pidfd, iov, 1, MADV_PAGEOUT, 0)
            raise OSError(ctypes.get_errno(), "process_madvise")
    finally:
        os.close(fd)

def runs(pid):
    import struct
    offs = []
    pm = open(f"/proc/{pid}/pagemap", "rb")
    for l in open(f"/proc/{pid}/maps").read().splitlines():
        f = l.split()
        if not (len(f) == 5 or f[5] == "[heap]") or "w" not in f[1]:
            continue
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        pm.seek(lo // 4096 * 8)
        data = pm.read((hi - lo) // 4096 * 8)
        for i in range(len(data) // 8):
            e = struct.unpack_from("<Q", data, i * 8)[0]
            if e >> 62 & 1:
                offs.append(e >> 5 & ((1 << 50) - 1))
    return len(offs), 1 + sum(1 for a, b in zip(offs, offs[1:]) if b != a + 1) if offs else 0

def one(way):
    subprocess.run(["fallocate", "-l", "1G", SWAP], check=True); os.chmod(SWAP, 0o600)
    subprocess.run(["mkswap", "-q", SWAP], check=True); subprocess.run(["swapon", SWAP], check=True)
    procs = []
    try:
        os.mkdir(CG)
        for i in range(N):
            d = f"{CG}/c{i}"; os.mkdir(d)
            p = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE,
                                 preexec_fn=lambda d=d: w(f"{d}/cgroup.procs", os.getpid()))
            p.stdout.readline(); procs.append(p)
        quarter = (HEAP + 8) * MIB // 4
        if way == "parent":
            w(f"{CG}/memory.limit_in_bytes", N * quarter)
        elif way == "children":
            for i in range(N):
                w(f"{CG}/c{i}/memory.limit_in_bytes", quarter)
        elif way == "pageout":
            for p in procs:
                page_out(p.pid, 0.75)
        else:
            ts = [threading.Thread(target=w, args=(f"{CG}/c{i}/memory.limit_in_bytes", quarter)) for i in range(N)]
            [t.start() for t in ts]; [t.join() for t in ts]
        n = r = 0
        for p in procs:
            a, b = runs(p.pid); n += a; r += b
        print(f"{way:10s}: {n} pages swapped ({n * 4 // 1024} MiB), {n / max(r, 1):.1f} pages a run", flush=True)
    finally:
        for p in procs:
            p.kill(); p.wait()
        for i in range(N):
            try: os.rmdir(f"{CG}/c{i}")
            except OSError: pass
        try: os.rmdir(CG)
        except OSError: pass
        subprocess.run(["swapoff", SWAP]); os.unlink(SWAP)

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 2
ways = sys.argv[2].split(",") if len(sys.argv) > 2 else ["parent", "children", "concurrent", "pageout"]
for k in range(rounds):
    for way in ways[k % len(ways):] + ways[:k % len(ways)]:
        one(way)
