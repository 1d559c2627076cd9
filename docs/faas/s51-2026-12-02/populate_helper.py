"""Reads one byte of every page of RUNS (JSON [[first, end], ...] page
indices from ADDR) in process PID's memory, IOV_MAX pages a call, as
memext_sys::populate does; prints the ms it took."""
import ctypes, json, sys, time
PAGE = 4096; IOV_MAX = 1024
libc = ctypes.CDLL(None, use_errno=True)
class IOV(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
pid, addr, runs = int(sys.argv[1]), int(sys.argv[2]), json.loads(sys.argv[3])
pages = [addr + i * PAGE for a, b in runs for i in range(a, b)]
buf = ctypes.create_string_buffer(IOV_MAX)
t0 = time.perf_counter()
for s in range(0, len(pages), IOV_MAX):
    batch = pages[s:s + IOV_MAX]
    local = (IOV * 1)(IOV(ctypes.cast(buf, ctypes.c_void_p), len(batch)))
    remote = (IOV * len(batch))(*[IOV(p, 1) for p in batch])
    got = libc.process_vm_readv(pid, local, 1, remote, len(batch), 0)
    if got != len(batch): print("short", got, ctypes.get_errno(), file=sys.stderr)
print(f"{(time.perf_counter() - t0) * 1000:.1f}")
