#!/usr/bin/env python3
"""Where bench/faas' function processes wait, by call: every PERIOD s, for
SECONDS s, each thread of each `function.py` process is read
(/proc/PID/task/TID/stat); one running or ready to run (R) is recorded as
such, one in uninterruptible sleep (D) with its kernel stack
(/proc/PID/task/TID/stack, root). Writes every sample to OUT (JSON lines:
epoch time, the function (its socket's name), state, frames) for
`callwait.py` to set beside the calls. A diagnostic: read-only, touches
nothing (session 79's `dsample.py` kept D alone, and no function name).

With --daemon, the memext daemon's threads instead (by their names:
memext-mover, memext-reclaim, ...), and stacks in every state but S.

Usage: tsample.py [--daemon] SECONDS OUT [PERIOD]"""
import json
import os
import re
import sys
import time

FRAMES = 8


def cmdlines():
    """(pid, argv as bytes) of every process."""
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                yield int(p), f.read().split(b"\0")
        except OSError:
            continue


def functions():
    """{pid: function name} of the function.py processes (--socket .../NAME.sock)."""
    out = {}
    for pid, cmd in cmdlines():
        if any(c.endswith(b"function.py") for c in cmd) and b"--socket" in cmd:
            sock = cmd[cmd.index(b"--socket") + 1].decode(errors="replace")
            m = re.search(r"(fn\d+)", sock)
            out[pid] = m.group(1) if m else sock
    return out


def daemon_threads():
    """{pid: "memext"} of the memext daemon processes (`memext daemon ...`)."""
    return {pid: "memext" for pid, cmd in cmdlines() if cmd and cmd[0].endswith(b"memext") and b"daemon" in cmd}


def sample(pid, tid, daemon=False):
    """(state, frames) of a thread in R or D (or, for the daemon, any but S);
    None otherwise."""
    try:
        with open(f"/proc/{pid}/task/{tid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        if state == "S" or (state != "R" and state != "D" and not daemon):
            return None
        if state == "R" and not daemon:
            return state, []
        with open(f"/proc/{pid}/task/{tid}/stack") as f:
            frames = [ln.split("] ", 1)[-1].split("+")[0] for ln in f.read().splitlines()]
        return state, frames[:FRAMES]
    except OSError:
        return None


def main():
    args = sys.argv[1:]
    daemon = bool(args) and args[0] == "--daemon"
    args = args[1:] if daemon else args
    if len(args) < 2:
        raise SystemExit(__doc__)
    seconds, out = float(args[0]), args[1]
    period = float(args[2]) if len(args) > 2 else 0.005
    find = daemon_threads if daemon else functions
    end = time.time() + seconds
    fns, found_at, sweeps, start = {}, 0.0, 0, time.time()
    with open(out, "w") as f:
        while time.time() < end:
            now = time.time()
            if now - found_at > 1.0:
                fns, found_at = find(), now
            for pid, fn in fns.items():
                try:
                    tids = os.listdir(f"/proc/{pid}/task")
                except OSError:
                    continue
                for tid in tids:
                    s = sample(pid, tid, daemon)
                    if s:
                        name = fn
                        if daemon:
                            try:
                                name = open(f"/proc/{pid}/task/{tid}/comm").read().strip()
                            except OSError:
                                continue
                        f.write(json.dumps({"t": now, "fn": name, "state": s[0], "frames": s[1]}) + "\n")
            sweeps += 1
            time.sleep(max(0.0, period - (time.time() - now)))
    print(f"{sweeps} sweeps, one every {1e3 * (time.time() - start) / max(sweeps, 1):.1f} ms")


if __name__ == "__main__":
    main()
