#!/usr/bin/env python3
"""Each noise wake of a run beside its container's v1 limit, from
bench/peers/psampler.py's samples (every 0.1 s): how long the touch took,
the highest limit it had meanwhile, how often its charges met that limit
(failcnt), and the server's usage against its cap. A touch of a 53 MiB heap
under a limit of 16 MiB reclaims its own pages as it faults them in.
Usage: thrash.py SAMPLES NOISE_LOG [--all]"""
import collections
import gzip
import json
import sys

MIB = 1 << 20


def samples(path):
    rows, names = collections.defaultdict(list), {}
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        for line in f:
            if line.startswith("# map"):
                _, _, cid, name = line.split()
                names[cid] = name
                continue
            p = line.split()
            try:
                rows[p[1]].append((float(p[0]), int(p[2]), int(p[3]), int(p[4])))
            except (ValueError, IndexError):
                continue
    # A run's modes each start their own containers under the same names.
    by_name = collections.defaultdict(list)
    for k, v in rows.items():
        by_name[names.get(k[:12], k)].extend(v)
    return {k: sorted(v) for k, v in by_name.items()}


def wakes(path):
    with open(path) as f:
        for line in f:
            name, _, rec = line.partition(" ")
            r = json.loads(rec)
            if r.get("op") == "wake":
                yield name, r["t"] - r["lat"], r["t"]


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    s = samples(argv[1])
    parent = s.get("parent", [])
    out = []
    for name, start, end in wakes(argv[2]):
        during = [x for x in s.get(name, []) if start - 0.1 <= x[0] <= end + 0.1]
        if len(during) < 2:
            continue
        par = [u for t, u, _, _ in parent if start <= t <= end] or [0]
        out.append((end - start, name, max(x[2] for x in during) / MIB, max(x[1] for x in during) / MIB,
                    during[-1][3] - during[0][3], max(par) / MIB))
    out.sort(reverse=True)
    under = [w for w in out if w[2] < 48]
    def median(xs):
        xs = sorted(xs)
        return xs[len(xs) // 2] if xs else 0
    print(f"{len(out)} wakes sampled; {len(under)} ran under a limit below 48 MiB all along "
          f"(their touch: median {median(w[0] for w in under):.2f} s; their charges that met the limit: "
          f"median {median(w[4] for w in under)})")
    print("touch s | container | highest limit MiB | highest usage MiB | charges that met the limit | server usage max MiB")
    for w in out if "--all" in argv else out[:12]:
        print(f"{w[0]:6.2f} | {w[1]} | {w[2]:.0f} | {w[3]:.0f} | {w[4]} | {w[5]:.0f}")


if __name__ == "__main__":
    main(sys.argv)
