#!/usr/bin/env python3
"""Swap-out and swap-in CPU per GiB of a private heap, with 64 KiB anon mTHP
on or off (host setting, restored). Own swap file, removed after."""
import ctypes, mmap, os, resource, subprocess, sys, time
MIB = 1 << 20
SIZE = int(sys.argv[1]) * MIB if len(sys.argv) > 1 else 256 * MIB
MTHP = "/sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled"
STATS = "/sys/kernel/mm/transparent_hugepage/hugepages-64kB/stats/"
libc = ctypes.CDLL(None, use_errno=True)
MADV_PAGEOUT, MADV_WILLNEED = 21, 3

def rd(p): return open(p).read().strip()
def wr(p, v): open(p, "w").write(v)
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF); return r.ru_stime + r.ru_utime
def stat(n): return int(rd(STATS + n))
def vm(n):
    for l in open("/proc/vmstat"):
        k, v = l.split()
        if k == n: return int(v)

def one(mode, readin):
    old = rd(MTHP).split("[")[1].split("]")[0]
    wr(MTHP, mode)
    try:
        m = mmap.mmap(-1, SIZE, flags=mmap.MAP_PRIVATE)
        addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
        page = os.urandom(2048) + bytes(2048)
        for off in range(0, SIZE, 4096):
            m[off:off + 4096] = page
        s0 = {k: stat(k) for k in ("swpout", "swpout_fallback", "swpin", "anon_fault_alloc")}
        c = cpu(); t = time.time(); o0 = vm("pswpout")
        assert libc.madvise(ctypes.c_void_p(addr), ctypes.c_size_t(SIZE), MADV_PAGEOUT) == 0
        out_cpu = cpu() - c; out_wall = time.time() - t; out_mib = (vm("pswpout") - o0) * 4096 / MIB
        time.sleep(1)
        c = cpu(); t = time.time(); i0 = vm("pswpin"); f0 = resource.getrusage(resource.RUSAGE_SELF).ru_majflt
        if readin == "willneed":
            libc.madvise(ctypes.c_void_p(addr), ctypes.c_size_t(SIZE), MADV_WILLNEED)
        s = 0
        for off in range(0, SIZE, 4096):
            s += m[off]
        in_cpu = cpu() - c; in_wall = time.time() - t; in_mib = (vm("pswpin") - i0) * 4096 / MIB
        majf = resource.getrusage(resource.RUSAGE_SELF).ru_majflt - f0
        s1 = {k: stat(k) - s0[k] for k in s0}
        gib = SIZE / (1 << 30)
        print(f"mthp64={mode:6} in={readin:8} out: {out_cpu/gib:5.2f} CPU-s/GiB {out_wall:5.2f}s {out_mib:6.0f}MiB | "
              f"in: {in_cpu/gib:5.2f} CPU-s/GiB {in_wall:5.2f}s {in_mib:6.0f}MiB majflt={majf} | {s1}", flush=True)
        m.close()
    finally:
        wr(MTHP, old)

swap = "/var/tmp/s30/swapfile"
subprocess.run(["fallocate", "-l", "2G", swap], check=True); os.chmod(swap, 0o600)
subprocess.run(["mkswap", swap], check=True, capture_output=True)
subprocess.run(["swapon", swap], check=True)
try:
    for r in range(int(os.environ.get("ROUNDS", "2"))):
        for mode in (("never", "always") if r % 2 == 0 else ("always", "never")):
            for readin in ("fault", "willneed"):
                one(mode, readin)
finally:
    subprocess.run(["swapoff", swap]); os.unlink(swap)
