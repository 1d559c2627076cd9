#!/usr/bin/env python3
"""How a pushed-out process's swapped pages lie in its swap area: for each
pid, its swapped private anonymous pages in address order, and how many runs
of consecutive swap slots they make (a read-back in address order needs at
least a request per run; one request per page when no two neighbours are
consecutive).  slots.py PID..."""
import struct, sys
def runs(pid):
    maps = open(f"/proc/{pid}/maps").read().splitlines()
    pm = open(f"/proc/{pid}/pagemap", "rb")
    offs = []
    for l in maps:
        f = l.split()
        anon = len(f) == 5 or f[5] in ("[heap]", "[stack]")
        if not anon or "w" not in f[1] or f[1][3] != "p":
            continue
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        pm.seek(lo // 4096 * 8)
        data = pm.read((hi - lo) // 4096 * 8)
        for i in range(len(data) // 8):
            e = struct.unpack_from("<Q", data, i * 8)[0]
            if e >> 62 & 1:
                offs.append(e >> 5 & ((1 << 50) - 1))
    if not offs:
        return 0, 0, 0
    r = 1 + sum(1 for a, b in zip(offs, offs[1:]) if b != a + 1)
    srt = sorted(offs)
    rs = 1 + sum(1 for a, b in zip(srt, srt[1:]) if b != a + 1)
    return len(offs), r, rs
tot = [0, 0, 0]
for p in sys.argv[1:]:
    try:
        n, r, rs = runs(p)
    except OSError:
        continue
    if n < 256:
        continue
    tot = [a + b for a, b in zip(tot, (n, r, rs))]
    print(f"pid {p}: {n} pages swapped ({n * 4 / 1024:.0f} MiB), {r} runs in address order "
          f"({n / r:.1f} pages a run), {rs} runs in slot order ({n / rs:.1f} pages a run)")
if tot[0]:
    print(f"all: {tot[0]} pages, {tot[0] / tot[1]:.1f} pages a run in address order, {tot[0] / tot[2]:.1f} in slot order")
