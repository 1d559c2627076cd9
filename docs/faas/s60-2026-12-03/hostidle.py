#!/usr/bin/env python3
"""What reading memory again costs after it sat idle: a 64 MiB buffer, every
page written, read one byte a page at once and then after 2, 5, 10 and 20 s
idle. On a VM whose host takes back what the guest leaves idle, the reads
after idling fault on the host (counted as this process's CPU time).

Usage: hostidle.py [MIB]"""
import sys
import time

if len(sys.argv) > 2 or sys.argv[1:2] in (["-h"], ["--help"]):
    sys.exit(__doc__)
try:
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 64
    if mib <= 0:
        raise ValueError
except ValueError:
    sys.exit(f"hostidle.py: MIB must be a positive whole number, not {sys.argv[1]!r}")
page = 4096
buf = bytearray(mib << 20)
for i in range(0, len(buf), page):
    buf[i] = 1


def read():
    t, c = time.perf_counter(), time.thread_time()
    sum(memoryview(buf)[::page])
    return (time.perf_counter() - t) * 1e3, (time.thread_time() - c) * 1e3


ms, cpu = read()
print(f"{mib} MiB read at once: {ms:.2f} ms ({cpu:.2f} ms CPU)")
for idle in (2, 5, 10, 20):
    time.sleep(idle)
    ms, cpu = read()
    print(f"after {idle:2d} s idle: {ms:7.2f} ms ({cpu:.2f} ms CPU), {ms * 1e3 / (len(buf) // page):.2f} us a page")
