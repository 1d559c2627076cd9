#!/usr/bin/env python3
"""Where bench/faas' function processes sleep uninterruptibly: every
PERIOD s, for SECONDS s, each thread of each `function.py` process is read
(/proc/PID/task/TID/stat); one in state D has its kernel stack read
(/proc/PID/task/TID/stack, root) and counted by its frames. Prints the
stacks by how often they were seen (samples, and the sweeps' mean
period: reading every thread takes time, so a sweep may come later than
PERIOD) and writes every sample to OUT (JSON lines: epoch time, pid, the
frames). A diagnostic: read-only, touches nothing.

Usage: dsample.py SECONDS OUT [PERIOD]"""
import collections
import json
import os
import sys
import time

FRAMES = 8


def function_pids():
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if b"function.py" in cmd and b"--socket" in cmd:
            out.append(int(p))
    return out


def d_stack(pid, tid):
    try:
        with open(f"/proc/{pid}/task/{tid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        if state != "D":
            return None
        with open(f"/proc/{pid}/task/{tid}/stack") as f:
            frames = [ln.split("] ", 1)[-1].split("+")[0] for ln in f.read().splitlines()]
        return frames[:FRAMES]
    except OSError:
        return None


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    seconds, out = float(sys.argv[1]), sys.argv[2]
    period = float(sys.argv[3]) if len(sys.argv) > 3 else 0.005
    end = time.time() + seconds
    pids, found_at = [], 0.0
    counts = collections.Counter()
    sweeps, start = 0, time.time()
    with open(out, "w") as f:
        while time.time() < end:
            now = time.time()
            if now - found_at > 1.0:
                pids, found_at = function_pids(), now
            for pid in pids:
                try:
                    tids = os.listdir(f"/proc/{pid}/task")
                except OSError:
                    continue
                for tid in tids:
                    frames = d_stack(pid, tid)
                    if frames:
                        counts[" < ".join(frames[:4])] += 1
                        f.write(json.dumps({"t": now, "pid": pid, "frames": frames}) + "\n")
            sweeps += 1
            time.sleep(max(0.0, period - (time.time() - now)))
    print(f"{sweeps} sweeps, one every {1e3 * (time.time() - start) / max(sweeps, 1):.1f} ms; "
          f"threads in D by kernel stack (samples):")
    for stack, n in counts.most_common(15):
        print(f"{n:9d}  {stack}")


if __name__ == "__main__":
    main()
