#!/usr/bin/env python3
"""Where a squeezed bench/faas function takes its major faults, by mapping:
one function process (bench/faas/function.py, 48 MiB heap) in a v1 memory
cgroup with a private zram swap device; before each call its cgroup is
squeezed (limit lowered to 4 MiB and lifted) and brought back as memext's
mover does (WILLNEED over its anonymous memory, MADV_COLLAPSE), alternately
with and without then reading the swapped pages of its private file mappings
through /proc/PID/mem (what a write to a library's data made anonymous);
`perf record -e major-faults -d` over the call, each fault's address named by
the mapping it falls in. Uses `squeeze_exp.py` of session 70 for the cgroup,
the zram device and the calls; removes everything it made, also on failure.

  python3 majors_by_mapping.py [ROUNDS]
"""
import os
import shutil
import signal
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../s70-2026-12-05"))
import squeeze_exp as S  # noqa: E402

PAGE = os.sysconf("SC_PAGE_SIZE")


def written_file_back(pid):
    """Reads one byte of every swapped page of the private file mappings."""
    n = 0
    with open(f"/proc/{pid}/pagemap", "rb") as pm, open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
        for lo, hi, path, perm in S.vmas(pid):
            if not path.startswith("/") or perm[3] != "p" or perm[0] != "r":
                continue
            pm.seek(lo // PAGE * 8)
            count = (hi - lo) // PAGE
            for i, e in enumerate(struct.unpack(f"{count}Q", pm.read(count * 8))):
                if e >> 62 & 1:
                    mem.seek(lo + i * PAGE)
                    mem.read(1)
                    n += 1
    return n


def majors_during_call(pid, sock, k):
    data = f"{S.DIR}/pf{k}.data"
    rec = subprocess.Popen(["perf", "record", "-q", "-e", "major-faults", "-c", "1", "-d", "-p", str(pid), "-o", data])
    time.sleep(1.0)
    result = S.call(sock)
    time.sleep(0.3)
    rec.send_signal(signal.SIGINT)
    rec.wait()
    addrs = subprocess.run(["perf", "script", "-i", data, "-F", "addr"], capture_output=True, text=True).stdout.split()
    return result, [int(a, 16) for a in addrs]


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    os.makedirs(S.DIR, exist_ok=True)
    os.makedirs(S.CG, exist_ok=True)
    sock = f"{S.DIR}/fn.sock"
    proc = None
    try:
        with S.zram(1 << 30):
            proc = subprocess.Popen(["sh", "-c", f"echo $$ > {S.CG}/cgroup.procs; exec python3 {S.HERE} --socket {sock} --heap-mib 48"])
            for _ in range(300):
                if os.path.exists(sock):
                    break
                time.sleep(0.1)
            time.sleep(1)
            pid = int(open(f"{S.CG}/cgroup.procs").read().split()[0])
            maps = S.vmas(pid)

            def mapping(addr):
                for lo, hi, path, perm in maps:
                    if lo <= addr < hi:
                        return f"{path or '(anonymous)'} {perm}"
                return "?"
            for k in range(2 * rounds):
                written = k % 2 == 1
                for _ in range(3):
                    S.call(sock)
                time.sleep(0.5)
                S.squeeze()
                S.bring_back(pid, "anon+collapse")
                read = written_file_back(pid) if written else None
                time.sleep(1)
                (lat, handler, majflt, minflt, pre_maj, pre_min), addrs = majors_during_call(pid, sock, k)
                by = {}
                for a in addrs:
                    by[mapping(a)] = by.get(mapping(a), 0) + 1
                top = sorted(by.items(), key=lambda x: -x[1])[:4]
                print(f"{'anon+collapse+written' if written else 'anon+collapse':22} written pages read {read}  "
                      f"call {lat:.2f} ms (handler {handler:.2f}) majors before/in handler {pre_maj}/{majflt} "
                      f"minors {pre_min}/{minflt}  majors by mapping {top}", flush=True)
    finally:
        if proc:
            proc.send_signal(signal.SIGTERM)
            proc.wait(10)
        for _ in range(50):
            try:
                os.rmdir(S.CG)
                break
            except OSError:
                time.sleep(0.2)
        shutil.rmtree(S.DIR, ignore_errors=True)


if __name__ == "__main__":
    main()
