#!/usr/bin/env python3
"""Per run: the reclaimer's lowerings (reclaimed events), how many yielded
and how long in all, how many stopped yielding because a charge met the cap."""
import glob, gzip, json, os, sys
for d in sys.argv[1:]:
    for f in sorted(glob.glob(os.path.join(d, "*-daemon-*.log*"))):
        op = gzip.open if f.endswith(".gz") else open
        n = y = cap = 0; ms = yms = 0.0
        for l in op(f, "rt"):
            if '"reclaimed"' not in l: continue
            e = json.loads(l)
            if e.get("event") != "reclaimed": continue
            n += 1; ms += e.get("ms", 0)
            if e.get("yielded_ms", 0) >= 2: y += 1; yms += e["yielded_ms"]
            if e.get("cap_met"): cap += 1
        print(f"{os.path.basename(d)} {os.path.basename(f)}: {n} lowerings, {ms/1e3:.1f} s; yielded {y} ({yms/1e3:.1f} s); cap met {cap}")
