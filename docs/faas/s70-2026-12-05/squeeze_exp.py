#!/usr/bin/env python3
"""What a bench/faas function's call costs after its cgroup was squeezed and
brought back, by what the bring-back covered: its anonymous memory only (as
memext's mover does), also its file-backed mappings (the interpreter's text),
with MADV_COLLAPSE over the anonymous ranges or not. One function process
(bench/faas/function.py, run by a private copy of the interpreter so that its
text is charged to its own cgroup, as an image's files are to the first
container that reads them), a v1 memory cgroup, a private zram swap device.
Everything made is removed at the end, also on failure. Written in session 70,
not run yet (the session ran out): check it before trusting its figures.

  python3 squeeze_exp.py --rounds 8 --out exp.csv
"""
import argparse
import contextlib
import ctypes
import http.client
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time

CG = "/sys/fs/cgroup/memory/memext-s70-exp"
DIR = "/var/tmp/s70/exp"
HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../bench/faas/function.py")
MADV_WILLNEED, MADV_COLLAPSE = 3, 25
LIBPYTHON = f"libpython{sys.version_info.major}.{sys.version_info.minor}.so.1.0"
SYS_PIDFD_OPEN, SYS_PROCESS_MADVISE = 434, 440
libc = ctypes.CDLL(None, use_errno=True)


class Iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


class UConn(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("localhost", timeout=30)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(30)
        self.sock.connect(self.path)


def call(sock):
    t0 = time.perf_counter()
    c = UConn(sock)
    c.request("GET", "/invoke")
    body = c.getresponse().read().decode().split()
    lat = (time.perf_counter() - t0) * 1e3
    c.close()
    return lat, float(body[0]), int(body[1]), int(body[2]), int(body[4]), int(body[5])


def vmas(pid):
    out = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split()
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            path = parts[5] if len(parts) > 5 else ""
            if path in ("[vdso]", "[vvar]", "[vsyscall]", "[vvar_vclock]"):
                continue
            out.append((lo, hi, path, parts[1]))
    return out


def advise(pidfd, ranges, advice):
    bad = 0
    for lo, hi in ranges:
        iov = Iovec(lo, hi - lo)
        r = libc.syscall(SYS_PROCESS_MADVISE, pidfd, ctypes.byref(iov), 1, advice, 0)
        if r < 0:
            bad += 1
    return bad


def bring_back(pid, variant):
    if variant in ("none", "never"):
        return
    pidfd = libc.syscall(SYS_PIDFD_OPEN, pid, 0)
    try:
        v = vmas(pid)
        anon = [(lo, hi) for lo, hi, p, perm in v if (p == "" or p.startswith("[")) and "w" in perm]
        files = [(lo, hi) for lo, hi, p, perm in v if p.startswith("/")]
        advise(pidfd, anon, MADV_WILLNEED)
        if "file" in variant:
            advise(pidfd, files, MADV_WILLNEED)
        time.sleep(0.3)
        if "collapse" in variant:
            advise(pidfd, anon, MADV_COLLAPSE)
    finally:
        os.close(pidfd)


def write(path, value):
    with open(path, "w") as f:
        f.write(str(value))


def read_int(path):
    with open(path) as f:
        return int(f.read().split()[0])


def stat(key):
    with open(f"{CG}/memory.stat") as f:
        for line in f:
            k, v = line.split()
            if k == key:
                return int(v)
    return 0


def squeeze():
    """The limit lowered until the kernel reclaims most of it, then lifted."""
    usage = read_int(f"{CG}/memory.usage_in_bytes")
    target = 4 << 20
    for lim in (target, 8 << 20, 16 << 20, 32 << 20):
        try:
            write(f"{CG}/memory.limit_in_bytes", lim)
            break
        except OSError:
            continue
    squeezed = read_int(f"{CG}/memory.usage_in_bytes")
    write(f"{CG}/memory.limit_in_bytes", -1)
    return usage, squeezed


@contextlib.contextmanager
def zram(size):
    with open("/sys/class/zram-control/hot_add") as f:
        n = int(f.read())
    dev = f"/dev/zram{n}"
    try:
        write(f"/sys/block/zram{n}/comp_algorithm", "lz4")
        write(f"/sys/block/zram{n}/disksize", size)
        subprocess.run(["mkswap", dev], check=True, capture_output=True)
        subprocess.run(["swapon", "-p", "200", dev], check=True)
        yield dev
    finally:
        subprocess.run(["swapoff", dev])
        write(f"/sys/block/zram{n}/reset", 1)
        write("/sys/class/zram-control/hot_remove", n)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--heap-mib", type=int, default=48)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(DIR, exist_ok=True)
    py = f"{DIR}/python3"
    shutil.copy(os.path.realpath(sys.executable), py)
    # The interpreter's text is in libpython (the executable is a 17 KiB
    # stub whose RUNPATH names it): copied too, found through
    # LD_LIBRARY_PATH, which a RUNPATH yields to.
    lib = f"{DIR}/{LIBPYTHON}"
    shutil.copy(os.path.join(sys.base_prefix, "lib", LIBPYTHON), lib)
    # Their pages in the page cache were charged to this script as it wrote
    # them: dropped (these files only), the function's first reads charge
    # them to its own cgroup.
    for path in (py, lib):
        fd = os.open(path, os.O_RDONLY)
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
    os.makedirs(CG, exist_ok=True)
    sock = f"{DIR}/fn.sock"
    proc = None
    variants = ["never", "none", "anon", "anon+collapse", "anon+file", "anon+collapse+file"]
    rows = []
    try:
        with zram(1 << 30):
            env = dict(os.environ, LD_LIBRARY_PATH=DIR, PYTHONHOME=sys.base_prefix)
            proc = subprocess.Popen(["sh", "-c", f"echo $$ > {CG}/cgroup.procs; exec {py} {HERE} --socket {sock} --heap-mib {a.heap_mib}"],
                                    env=env)
            for _ in range(300):
                if os.path.exists(sock):
                    break
                time.sleep(0.1)
            time.sleep(1)
            for r in range(a.rounds):
                for k in range(len(variants)):
                    v = variants[(k + r) % len(variants)]
                    for _ in range(3):
                        call(sock)
                    time.sleep(0.5)
                    before = (stat("cache"), stat("rss"))
                    usage, squeezed = (0, 0) if v == "never" else squeeze()
                    after = (stat("cache"), stat("rss"))
                    bring_back(proc.pid, v)
                    time.sleep(1.0)
                    back = (stat("cache"), stat("rss"))
                    lat, handler, majflt, minflt, pre_maj, pre_min = call(sock)
                    rows.append((r, v, lat, handler, majflt, minflt, pre_maj, pre_min,
                                 before[0] >> 10, after[0] >> 10, back[0] >> 10, back[1] >> 10))
                    print(r, v, f"{lat:.2f}", handler, majflt, minflt, pre_maj, pre_min,
                          "cache KiB", before[0] >> 10, after[0] >> 10, back[0] >> 10, flush=True)
    finally:
        if proc:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for _ in range(50):
            try:
                os.rmdir(CG)
                break
            except OSError:
                time.sleep(0.2)
        shutil.rmtree(DIR, ignore_errors=True)
    with open(a.out, "w") as f:
        f.write("round,variant,latency_ms,handler_ms,majflt,minflt,pre_majflt,pre_minflt,cache_kib_before,cache_kib_squeezed,cache_kib_back,rss_kib_back\n")
        for row in rows:
            f.write(",".join(str(x) for x in row) + "\n")
    print()
    for v in variants:
        rs = [x for x in rows if x[1] == v]
        med = lambda i: statistics.median(x[i] for x in rs)
        print(f"{v:20} n={len(rs)} latency p50 {med(2):6.2f} ms (min {min(x[2] for x in rs):.2f}, max {max(x[2] for x in rs):.2f})"
              f"  handler {med(3):.2f}  majflt {med(4):.0f}  minflt {med(5):.0f}  pre_majflt {med(6):.0f}  pre_minflt {med(7):.0f}")


if __name__ == "__main__":
    main()
