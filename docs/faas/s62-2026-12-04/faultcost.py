#!/usr/bin/env python3
"""What a page fault costs on this machine, one byte a page over a buffer:
- anonymous memory written the first time (a fault that allocates and zeroes
  a page), again at once after the buffer was unmapped (the pages the guest
  just freed are reused first), and after 5 s freed (this VM's balloon
  device reports free 2 MiB blocks to the host about 2 s after they are
  freed);
- the same buffer written again (resident: no fault), the cost of the write
  itself;
- a memfd's pages written through a second mapping (resident pages, a write
  fault that only maps one) and read through a third (a read fault maps up to
  16 resident pages at once).
A cold call's page read back from a tier pays for a new page and a mapping,
unless its read-back mapped it.

Usage: faultcost.py [MIB]"""
import mmap
import os
import sys
import time

if len(sys.argv) > 2 or sys.argv[1:2] in (["-h"], ["--help"]):
    sys.exit(__doc__)
try:
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 256
    if mib <= 0:
        raise ValueError
except ValueError:
    sys.exit(f"faultcost.py: MIB must be a positive whole number, not {sys.argv[1]!r}")
PAGE = 4096
size = mib << 20
pages = size // PAGE
ones = b"\x01" * pages


def timed(op):
    t = time.perf_counter()
    op()
    return (time.perf_counter() - t) * 1e6 / pages


def anon_write():
    """us a page of the first write to a new anonymous buffer, and of a second."""
    m = mmap.mmap(-1, size)
    first = timed(lambda: memoryview(m).__setitem__(slice(None, None, PAGE), ones))
    again = timed(lambda: memoryview(m).__setitem__(slice(None, None, PAGE), ones))
    m.close()
    return first, again


def say(what, us):
    print(f"{what:46s} {us:5.2f} us a page")


first, resident = anon_write()
say(f"{mib} MiB anonymous, first write", first)
say("the same, written again (resident)", resident)
say("a new buffer at once after unmapping", anon_write()[0])
time.sleep(5)
say("a new buffer 5 s after unmapping", anon_write()[0])
fd = os.memfd_create("faultcost")
try:
    os.ftruncate(fd, size)
    maps = [mmap.mmap(fd, size) for _ in range(3)]
    say("memfd, first write (allocates)", timed(lambda: memoryview(maps[0]).__setitem__(slice(None, None, PAGE), ones)))
    say("memfd, second mapping written (maps only)", timed(lambda: memoryview(maps[1]).__setitem__(slice(None, None, PAGE), ones)))
    say("memfd, third mapping read (maps 16 at once)", timed(lambda: sum(memoryview(maps[2])[::PAGE])))
    for m in maps:
        m.close()
finally:
    os.close(fd)
