#!/usr/bin/env python3
"""Do a function's own swap-ins wait behind memext's bulk read-back of its heap?
A child (the function) has a heap (HEAP MiB) and a small region it needs first
(its interpreter's pages: FIRST pages scattered over 8 MiB), both paged out to
the swap file.  The parent (the mover) reads the heap back with
process_madvise(MADV_WILLNEED) in batches of B MiB paced at W MiB/s, while the
child faults its first pages one by one.  Prints the child's time to its
handler (all first pages in) and the read-back's time, per variant, rotated.
Environment: IN_HEAP=1 puts the first pages inside the heap (the read-back
covers them, as it covers a function's interpreter pages); LOAD=N has another
process dirty N MiB and page it out over and over (a push-out beside);
MAPS=1 has the function map and unmap 256 KiB every 10 faults (its mmap_lock
taken for writing).  Needs a swap area on; run as root.  hol.py [ROUNDS]"""
import ctypes, mmap, os, random, statistics as st, struct, sys, time
libc = ctypes.CDLL(None, use_errno=True)
SYS_pidfd_open, SYS_process_madvise, SYS_ioprio_set = 434, 440, 251
WILLNEED, PAGEOUT = 3, 21
HEAP, FIRST_SPAN, FIRST = 50 << 20, 8 << 20, 100
PAGE = 4096
MAPS = os.environ.get('MAPS') == '1'
IN_HEAP = os.environ.get('IN_HEAP') == '1'  # the first pages inside the heap read back
LOAD = int(os.environ.get('LOAD', '0'))  # MiB paged out again and again beside, 0: none

class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]

def addr(m):
    return ctypes.addressof(ctypes.c_char.from_buffer(m))

def child(w, r):
    heap = mmap.mmap(-1, HEAP, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    first = mmap.mmap(-1, FIRST_SPAN, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    blob = os.urandom(1 << 20)
    for m, n in ((heap, HEAP), (first, FIRST_SPAN)):
        for off in range(0, n, 1 << 20):
            m[off:off + (1 << 20)] = blob
    offs = sorted(random.Random(1).sample(range(0, HEAP if IN_HEAP else FIRST_SPAN, PAGE), FIRST))
    if IN_HEAP:
        first = heap
    while True:
        for m, n in ((heap, HEAP), (first, FIRST_SPAN)):
            libc.madvise(ctypes.c_void_p(addr(m)), ctypes.c_size_t(n), PAGEOUT)
        os.write(w, struct.pack("QQ", addr(heap), addr(first)))
        if os.read(r, 1) != b"g":
            return
        t0 = time.perf_counter()
        s = 0
        for i, off in enumerate(offs):
            s += first[off]
            if MAPS and i % 10 == 0:
                # an allocator's arena churn: the mmap_lock taken for writing
                a = mmap.mmap(-1, 256 << 10, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
                a[0] = 1
                a.close()
        t1 = time.perf_counter()
        os.write(w, struct.pack("d", (t1 - t0) * 1000))
        # the handler: touch the heap
        for off in range(0, HEAP, PAGE):
            s += heap[off]
        os.write(w, struct.pack("d", (time.perf_counter() - t0) * 1000))

def loader():
    """Another context pushed out meanwhile: dirty LOAD MiB and page it out, over and over."""
    m = mmap.mmap(-1, LOAD << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    blob = os.urandom(1 << 20)
    while True:
        for off in range(0, LOAD << 20, 1 << 20):
            m[off:off + (1 << 20)] = blob
        libc.madvise(ctypes.c_void_p(addr(m)), ctypes.c_size_t(LOAD << 20), PAGEOUT)

def read_back(pidfd, heap, batch, bw, backwards=False):
    t0 = time.perf_counter()
    done = 0
    while done < HEAP:
        n = min(batch, HEAP - done)
        v = iovec(heap + (HEAP - done - n if backwards else done), n)
        if libc.syscall(SYS_process_madvise, pidfd, ctypes.byref(v), 1, WILLNEED, 0) < 0:
            raise OSError(ctypes.get_errno(), "process_madvise")
        done += n
        if bw:
            due = done / (bw << 20)
            el = time.perf_counter() - t0
            if due > el:
                time.sleep(due - el)
    return (time.perf_counter() - t0) * 1000

def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    variants = [("none", None, 0, False), ("16 MiB unpaced (a wake's today)", 16 << 20, 0, False),
                ("16 MiB unpaced, from the end", 16 << 20, 0, "end"), ("16 MiB at 512 MiB/s (today)", 16 << 20, 512, False),
                ("2 MiB at 512 MiB/s", 2 << 20, 512, False), ("2 MiB at 256 MiB/s", 2 << 20, 256, False),
                ("16 MiB at 512 MiB/s, I/O class idle", 16 << 20, 512, True)]
    r1, w1 = os.pipe(); r2, w2 = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r1); os.close(w2); child(w1, r2); os._exit(0)
    os.close(w1); os.close(r2)
    pidfd = libc.syscall(SYS_pidfd_open, pid, 0)
    lp = 0
    if LOAD:
        lp = os.fork()
        if lp == 0:
            os.nice(19)
            loader()
            os._exit(0)
    res = {v[0]: [] for v in variants}
    for rnd in range(rounds):
        order = variants[rnd % len(variants):] + variants[:rnd % len(variants)]
        for name, batch, bw, idle in order:
            heap, first = struct.unpack("QQ", os.read(r1, 16))
            time.sleep(0.5)
            # IOPRIO_CLASS_IDLE = 3 << 13, BE 4 = (2 << 13) | 4; who 1 = this thread
            libc.syscall(SYS_ioprio_set, 1, 0, (3 << 13) if idle is True else ((2 << 13) | 4))
            os.write(w2, b"g")
            rb = read_back(pidfd, heap, batch, bw, idle == "end") if batch else 0.0
            first_ms = struct.unpack("d", os.read(r1, 8))[0]
            all_ms = struct.unpack("d", os.read(r1, 8))[0]
            res[name].append((first_ms, all_ms, rb))
    os.write(w2, b"q")
    os.waitpid(pid, 0)
    if lp:
        os.kill(lp, 9)
        os.waitpid(lp, 0)
    print(("the first pages inside the heap read back; " if IN_HEAP else "") + (f"beside {LOAD} MiB paged out again and again; " if LOAD else "") + ("with an mmap and munmap every 10 faults; " if MAPS else "") + f"{FIRST} scattered faults of an 8 MiB region, then a touch of the {HEAP >> 20} MiB heap; medians of {rounds} rounds (min-max)")
    for name, *_ in variants:
        v = res[name]
        f = lambda i: f"{st.median(x[i] for x in v):7.1f} ({min(x[i] for x in v):.0f}-{max(x[i] for x in v):.0f})"
        print(f"  {name:40s} first pages {f(0)} ms | whole call {f(1)} ms | read-back {f(2)} ms")

main()
