#!/usr/bin/env python3
"""The first read of freshly written memory on this VM, chunk by chunk.

Writes one byte of every page of N chunks of 64 MiB (as bench/faas'
functions make their heaps), waits, then reads one byte of every page of
each chunk twice, timing the CPU each pass takes (time.thread_time: what a
call's handler_cpu_ms measures). A chunk whose first read costs much more
CPU than its second paid for something besides the read: the guest's
accessed bits, or the host's backing of the guest's memory.

  python3 first_read.py [--chunks 64] [--wait 10]
"""
import argparse
import os
import statistics
import time

PAGE = os.sysconf("SC_PAGE_SIZE")
MIB = 1 << 20


def write(buf):
    for off in range(0, len(buf), PAGE):
        buf[off] = 1


def read(buf):
    c0 = time.thread_time()
    sum(memoryview(buf)[::PAGE])
    return (time.thread_time() - c0) * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chunks", type=int, default=64)
    ap.add_argument("--wait", type=float, default=10.0)
    a = ap.parse_args()
    chunks, wrote = [], []
    for _ in range(a.chunks):
        b = bytearray(64 * MIB)
        c0 = time.thread_time()
        write(b)
        wrote.append((time.thread_time() - c0) * 1e3)
        chunks.append(b)
    time.sleep(a.wait)
    first = [read(b) for b in chunks]
    second = [read(b) for b in chunks]
    q = lambda v: f"p50 {statistics.median(v):6.2f}  max {max(v):6.2f}  min {min(v):6.2f}"
    print(f"{a.chunks} chunks of 64 MiB, {a.wait:.0f} s between the write and the reads (CPU ms a chunk)")
    print(f"  write        {q(wrote)}")
    print(f"  first read   {q(first)}")
    print(f"  second read  {q(second)}")
    print("  first reads over 3x the chunk's second:", sum(1 for f, s in zip(first, second) if f > 3 * s))
    print("  per chunk (write first second):", " ".join(f"{w:.0f}/{f:.1f}/{s:.1f}" for w, f, s in zip(wrote, first, second)))


if __name__ == "__main__":
    main()
