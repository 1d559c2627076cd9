#!/usr/bin/env python3
"""After a limit lowering left a heap's kept pages with their accessed bits
cleared (abit_reclaim.py), what reading it costs (a) as is, (b) after the
kept pages are read by another process (process_vm_readv, IOV_MAX pages
a call, as memext_sys::populate maps pages: populate_helper.py), (c) after MADV_COLLAPSE of the heap
(as memext's map-back does for a working set's chunks), and what the
collapse took. Each case in its own round, rotated. Run as root; removes
what it made."""
import ctypes, os, struct, subprocess, sys, time, statistics
PAGE = 4096; MIB = 1 << 20
HEAP_MIB = int(os.environ.get("HEAP_MIB", "64")); LOWER_MIB = int(os.environ.get("LOWER_MIB", "8"))
ROUNDS = int(os.environ.get("ROUNDS", "4"))
libc = ctypes.CDLL(None, use_errno=True)
MADV_COLLAPSE = 25

from abit_reclaim import CG, present_runs, read, scratch, w  # noqa: E402 (the same heap, cgroup and reads)


def populate_from_child(addr, runs):
    """Another process reads one byte of each kept page of this heap with
    process_vm_readv, IOV_MAX pages a call (populate_helper.py)."""
    import json
    out = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "populate_helper.py"),
                          str(os.getpid()), str(addr), json.dumps(runs)], check=True, capture_output=True, text=True)
    return float(out.stdout)

def main():
    with scratch():
        cases = ["as-is", "populated", "collapsed"]
        res = {c: [] for c in cases}
        for r in range(ROUNDS * len(cases)):
            case = cases[(r + r // len(cases)) % len(cases)]
            heap = bytearray(HEAP_MIB * MIB); half = len(heap) // 2
            for off in range(0, half, MIB): heap[off:off + MIB] = os.urandom(MIB)
            for off in range(half, len(heap), PAGE): heap[off] = 1
            mv = memoryview(heap); n = len(heap) // PAGE
            addr = ctypes.addressof((ctypes.c_char * len(heap)).from_buffer(heap))
            for _ in range(3): read(mv, [(0, n)])
            usage = int(open(f"{CG}/memory.usage_in_bytes").read())
            try:
                w(f"{CG}/memory.limit_in_bytes", usage - LOWER_MIB * MIB)
            except OSError as e:
                print(f"round {r}: lowering refused ({e}); skipped"); w(f"{CG}/memory.limit_in_bytes", -1); continue
            w(f"{CG}/memory.limit_in_bytes", -1)
            runs = present_runs(addr, n); kept = sum(b - a for a, b in runs)
            extra = ""
            if case == "populated":
                extra = f", populate {populate_from_child(addr, runs):.1f} ms"
            elif case == "collapsed":
                lo = (addr + (2 * MIB - 1)) & ~(2 * MIB - 1); hi = (addr + len(heap)) & ~(2 * MIB - 1)
                t0 = time.perf_counter(); rc = libc.madvise(ctypes.c_void_p(lo), ctypes.c_size_t(hi - lo), MADV_COLLAPSE)
                extra = f", collapse {(time.perf_counter() - t0) * 1000:.1f} ms (rc {rc}, errno {ctypes.get_errno()})"
                runs = present_runs(addr, n)
            a = read(mv, runs); b = read(mv, runs); full = read(mv, [(0, n)]); again = read(mv, [(0, n)])
            res[case].append(a)
            print(f"round {r} {case:9s}: {kept} of {n} pages kept{extra}; read kept {a:.2f} ms, again {b:.2f}; whole heap after {again:.2f} ms", flush=True)
            del mv, heap
        for c in cases:
            print(f"{c:9s} first read of the kept pages: median {statistics.median(res[c]):.2f} ms ({', '.join(f'{x:.1f}' for x in res[c])})")


if __name__ == "__main__":
    main()
