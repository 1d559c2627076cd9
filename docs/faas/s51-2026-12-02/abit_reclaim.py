#!/usr/bin/env python3
"""Does a limit lowering's reclaim scan make the pages it leaves in DRAM
slower to read? A 64 MiB heap (bench/faas' function heap: half random,
half one byte a page) in a scratch v1 memory cgroup with a swap file; each
round reads the pages still mapped twice, after (a) a second of rest
(control) and (b) its limit lowered by LOWER_MIB and raised again. What
the first read costs over the second is what the rest or the scan left to
pay (accessed bits cleared, TLB flushed). Run as root; removes what it made."""
import contextlib, ctypes, os, struct, subprocess, sys, time, statistics
PAGE = 4096; MIB = 1 << 20
HEAP_MIB = int(os.environ.get("HEAP_MIB", "64")); LOWER_MIB = int(os.environ.get("LOWER_MIB", "8"))
ROUNDS = int(os.environ.get("ROUNDS", "10"))
CG = "/sys/fs/cgroup/memory/memext-s51-abit"
SWAP = "/var/tmp/memext-s51-abit.swap"

def w(path, val):
    with open(path, "w") as f: f.write(str(val))

def present_runs(addr, n):
    """(first, last+1) page index runs of the heap mapped now (pagemap bit 63)."""
    with open("/proc/self/pagemap", "rb") as f:
        f.seek((addr // PAGE) * 8); data = f.read(n * 8)
    runs = []; start = None
    for i in range(n):
        (e,) = struct.unpack_from("<Q", data, i * 8)
        if e >> 63:
            if start is None: start = i
        elif start is not None:
            runs.append((start, i)); start = None
    if start is not None: runs.append((start, n))
    return runs

def read(mv, runs):
    t0 = time.perf_counter(); s = 0
    for a, b in runs: s += sum(mv[a * PAGE:b * PAGE:PAGE])
    return (time.perf_counter() - t0) * 1000

def majflt():
    return int(open("/proc/self/stat").read().rsplit(")", 1)[1].split()[9])

@contextlib.contextmanager
def scratch():
    """A swap file and a scratch memory cgroup holding this process, both
    removed on the way out, also on failure."""
    made_swap = made_cg = False
    try:
        subprocess.run(["fallocate", "-l", "512M", SWAP], check=True); os.chmod(SWAP, 0o600)
        subprocess.run(["mkswap", "-q", SWAP], check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["swapon", SWAP], check=True); made_swap = True
        os.mkdir(CG); made_cg = True
        w(f"{CG}/cgroup.procs", os.getpid())
        yield
    finally:
        if made_cg:
            w("/sys/fs/cgroup/memory/cgroup.procs", os.getpid())
            os.rmdir(CG)
        if made_swap: subprocess.run(["swapoff", SWAP])
        if os.path.exists(SWAP): os.unlink(SWAP)

def main():
    with scratch():
        heap = bytearray(HEAP_MIB * MIB); half = len(heap) // 2
        for off in range(0, half, MIB): heap[off:off + MIB] = os.urandom(MIB)
        for off in range(half, len(heap), PAGE): heap[off] = 1
        mv = memoryview(heap); n = len(heap) // PAGE
        addr = ctypes.addressof((ctypes.c_char * len(heap)).from_buffer(heap))
        allp = [(0, n)]
        for _ in range(3): read(mv, allp)
        ctrl, scan, kept = [], [], []
        for r in range(ROUNDS):
            time.sleep(1)
            a = read(mv, allp); b = read(mv, allp); ctrl.append(a - b)
            usage = int(open(f"{CG}/memory.usage_in_bytes").read())
            try:
                w(f"{CG}/memory.limit_in_bytes", usage - LOWER_MIB * MIB)
            except OSError as e:  # the kernel could not reclaim that far
                print(f"round {r}: lowering refused ({e}); skipped", flush=True)
                w(f"{CG}/memory.limit_in_bytes", -1); continue
            w(f"{CG}/memory.limit_in_bytes", -1)
            runs = present_runs(addr, n); np_ = sum(b - a for a, b in runs)
            m0 = majflt(); a = read(mv, runs); m1 = majflt(); b = read(mv, runs)
            scan.append(a - b); kept.append(np_)
            print(f"round {r}: rest +{ctrl[-1]:.2f} ms; after lowering {LOWER_MIB} MiB: {np_} of {n} pages mapped, first read {a:.2f} ms ({m1 - m0} major faults), second {b:.2f} ms, +{a - b:.2f}", flush=True)
            read(mv, allp)  # the rest back in
        med = statistics.median
        print(f"median extra on the first read: after rest {med(ctrl):.2f} ms, after a lowering {med(scan):.2f} ms (pages kept median {med(kept):.0f} of {n})")

if __name__ == "__main__":
    main()
