#!/usr/bin/env python3
"""The read-backs of bench/faas memext runs, from the daemon's log
(`read-back` events): how many, their time (p50, p90) and size (p50), and
how many read written pages of private file mappings (`written_file_bytes`,
logged by 176bd7f / 789980b only) and how much.

  python3 read_backs.py RUN_DIR..."""
import gzip
import json
import statistics
import sys


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for run in sys.argv[1:]:
        ms, mib, written = [], [], []
        with gzip.open(f"{run}/memext-daemon-zram-r0.log.gz", "rt") as f:
            for line in f:
                try:
                    e = json.loads(line)
                except ValueError:
                    continue
                d = e.get("fields", e)
                if d.get("event") != "read-back":
                    continue
                ms.append(float(d["seconds"]) * 1e3)
                mib.append(int(d["bytes"]) / (1 << 20))
                if int(d.get("written_file_bytes", 0)):
                    written.append(int(d["written_file_bytes"]) / 1024)
        ms.sort()
        print(f"{run}: {len(ms)} read-backs, {statistics.median(ms):.1f} / {ms[int(len(ms) * 0.9)]:.1f} ms (p50 / p90), "
              f"{statistics.median(mib):.0f} MiB p50; with written file pages {len(written)}"
              + (f", {statistics.median(written):.0f} KiB p50, {max(written):.0f} max" if written else ""))


if __name__ == "__main__":
    main()
