"""What MADV_COLLAPSE costs on a resident 64 MiB heap (bench/faas' heap),
per 2 MiB block, and what reading the heap costs before and after."""
import ctypes, os, time, statistics
PAGE = 4096; MIB = 1 << 20
libc = ctypes.CDLL(None, use_errno=True)
for r in range(5):
    heap = bytearray(64 * MIB + 2 * MIB); half = len(heap) // 2
    for off in range(0, half, MIB): heap[off:off + MIB] = os.urandom(MIB)
    for off in range(half, len(heap), PAGE): heap[off] = 1
    mv = memoryview(heap)
    addr = ctypes.addressof((ctypes.c_char * len(heap)).from_buffer(heap))
    lo = (addr + 2 * MIB - 1) & ~(2 * MIB - 1); hi = (addr + len(heap)) & ~(2 * MIB - 1)
    def rd():
        t0 = time.perf_counter(); sum(mv[::PAGE]); return (time.perf_counter() - t0) * 1000
    rd(); before = rd()
    with open('/proc/self/clear_refs', 'w') as f: f.write('1')
    cleared = rd()
    with open('/proc/self/clear_refs', 'w') as f: f.write('1')
    times = []; fails = 0
    for a in range(lo, hi, 2 * MIB):
        t0 = time.perf_counter()
        if libc.madvise(ctypes.c_void_p(a), ctypes.c_size_t(2 * MIB), 25) != 0: fails += 1
        times.append((time.perf_counter() - t0) * 1000)
    after = rd()
    print(f"round {r}: read {before:.2f} ms; after clear_refs {cleared:.2f}; collapse {len(times)} blocks {sum(times):.1f} ms (median {statistics.median(times):.2f}, max {max(times):.2f}, refused {fails}); read after collapse (A bits cleared before it) {after:.2f} ms")
    del mv, heap
