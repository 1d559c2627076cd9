#!/usr/bin/env python3
"""Does a swapped page read back by a read fault keep its swap slot?  A
200 MiB anonymous heap (every page distinct) paged out with MADV_PAGEOUT,
then read once; swap used and SwapCached from /proc/meminfo after each step.
Run with a swap area on (and nothing else swapping)."""
import mmap, sys
MIB = 1 << 20
def mi():
    d = dict((l.split(":")[0], int(l.split()[1])) for l in open("/proc/meminfo"))
    return (d["SwapTotal"] - d["SwapFree"]) // 1024, d["SwapCached"] // 1024
n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
m = mmap.mmap(-1, n * MIB, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
for i in range(0, n * MIB, 4096):
    m[i:i + 8] = i.to_bytes(8, "little")
print("filled: swap used %d MiB, swap cached %d MiB" % mi())
m.madvise(21)
print("paged out: swap used %d MiB, swap cached %d MiB" % mi())
s = 0
for i in range(0, n * MIB, 4096):
    s += m[i]
print("read back: swap used %d MiB, swap cached %d MiB" % mi())
m.madvise(21)
print("paged out again: swap used %d MiB, swap cached %d MiB" % mi())
