"""Latency percentiles of each run's calls, one method for all (linear
interpolation between order statistics), and its OOM-wait events.
Usage: python3 pcts.py RUN_DIR..."""
import csv, gzip, sys


def pct(v, p):
    v = sorted(v)
    k = (len(v) - 1) * p / 100
    f = int(k)
    c = min(f + 1, len(v) - 1)
    return v[f] + (v[c] - v[f]) * (k - f)


for d in sys.argv[1:]:
    rows = list(csv.DictReader(open(f"{d}/calls-zram-memext-r0.csv")))
    lat = [float(r["latency_ms"]) for r in rows if not r["error"]]
    errors = sum(1 for r in rows if r["error"])
    with gzip.open(f"{d}/memext-daemon-zram-r0.log.gz", "rt") as f:
        ooms = sum('"event":"out-of-memory"' in line for line in f)
    print(f"{d}: {len(rows)} calls, {errors} failed, p50 {pct(lat, 50):.0f} ms, p99 {pct(lat, 99):.0f} ms, "
          f"p99.9 {pct(lat, 99.9):.0f} ms, max {max(lat):.0f} ms, out-of-memory events {ooms}")
