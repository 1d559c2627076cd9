#!/usr/bin/env python3
"""Senpai, the PSI-driven proactive reclaim of Meta's TMO (ASPLOS'22), as a peer
of memext in bench/peers: for each cgroup given, find the smallest memory size
it can run at without more than a target of memory stall, by stepping its limit
down while its pressure stays below the target and backing off when it rises.

Written here from the published controller (facebookincubator/senpai,
senpai.py, read, not copied) with its published defaults:

  every second, take the cgroup's memory pressure: the growth of the `total`
  stall time (µs) of `some` in memory.pressure, summed since the last
  adjustment (the integral);
  - integral above the target PRESSURE (10 ms): back off, raising the limit by
    a factor min(MAX_BACKOFF, MAX_BACKOFF * (integral / PRESSURE / COEFF_BACKOFF)^2);
    then wait INTERVAL - 1 seconds;
  - else, once INTERVAL (6) seconds have passed since the last adjustment:
    probe, lowering the limit by min(MAX_PROBE, MAX_PROBE * (PRESSURE /
    max(integral, 1) / COEFF_PROBE)^2), i.e. at most 1% per interval;
  - every adjustment resets the integral; the limit stays within
    [MIN_SIZE, MAX_SIZE], page-aligned; a limit that is not the one Senpai
    wrote (start, or someone else) restarts from the current usage.

Where this host differs (a v1 memory controller): Senpai writes memory.high,
which throttles; v1 has no memory.high, so here the limit is v1's
memory.limit_in_bytes, which reclaims the same way on the way down but is hard
(an allocation at the limit reclaims synchronously, or waits with OOM kills off
as memext runs them). Pressure comes from the unified hierarchy's per-cgroup
memory.pressure, which this host has even though the memory controller is v1.
On a cgroup-v2 host the kernel's memory.reclaim is used, as TMO's later Senpai
does (the interface Meta upstreamed for it, Linux 5.19): a probe asks the
kernel to reclaim the probe's share of the current usage, a back-off writes
nothing (there is no limit to raise), and nothing is left to put back.

A benchmark peer, not part of memext: `python3 bench/peers/senpai.py CGROUP...`
runs until SIGTERM/SIGINT and then puts every limit back as it found it.
"""
import argparse
import os
import signal
import sys
import time

PAGE = 4096
UNLIMITED = (1 << 63) - 1


class Params:
    """The published defaults (senpai.py's argument parser)."""

    def __init__(self, min_size=100 << 20, max_size=100 << 30, interval=6, pressure=10 * 1000,
                 max_probe=0.01, max_backoff=1.0, coeff_probe=10, coeff_backoff=20):
        self.min_size, self.max_size = min_size, max_size
        self.interval, self.pressure = interval, pressure
        self.max_probe, self.max_backoff = max_probe, max_backoff
        self.coeff_probe, self.coeff_backoff = coeff_probe, coeff_backoff


class Controller:
    """Senpai's decision for one cgroup, pure: fed the stall total each tick,
    it answers with the factor to scale the limit by (None: leave it)."""

    def __init__(self, p, total):
        self.p = p
        self.last_total = total
        self.integral = 0
        self.grace_ticks = p.interval

    def tick(self, total):
        delta = total - self.last_total
        self.last_total = total
        self.integral += delta
        p = self.p
        if self.integral > p.pressure:
            # Back off, more the further pressure is above the target.
            err = self.integral / p.pressure
            adj = min((err / p.coeff_backoff) ** 2 * p.max_backoff, p.max_backoff)
            self.integral = 0
            self.grace_ticks = p.interval - 1
            return adj
        if self.grace_ticks:
            self.grace_ticks -= 1
            return None
        # Probe: tighten, more the further pressure is below the target.
        err = p.pressure / max(self.integral, 1)
        adj = min((err / p.coeff_probe) ** 2 * p.max_probe, p.max_probe)
        self.integral = 0
        self.grace_ticks = p.interval - 1
        return -adj


def scaled(limit, factor, p, current):
    """The limit after scaling by `factor`, bounded and page-aligned; `limit`
    None (not Senpai's) restarts from the current usage."""
    x = current if limit is None else int(limit + limit * factor)
    x = max(p.min_size, min(p.max_size, x))
    return x & ~(PAGE - 1)


def reclaim_bytes(current, factor):
    """v2: the bytes a probe of `factor` (< 0) asks memory.reclaim for, page-aligned."""
    return int(current * -factor) & ~(PAGE - 1)


def stall_total(text):
    """Pure: the `some` total (µs) of a memory.pressure file."""
    for line in text.splitlines():
        if line.startswith("some "):
            for field in line.split()[1:]:
                if field.startswith("total="):
                    return int(field[6:])
    raise ValueError(f"no 'some ... total=' in {text!r}")


class Cgroup:
    """One cgroup's files: pressure from `psi_dir`, the limit and usage from
    `mem_dir` (the same directory on v2)."""

    def __init__(self, mem_dir, psi_dir, v2):
        self.mem_dir, self.psi_dir, self.v2 = mem_dir, psi_dir, v2
        self.knob = None if v2 else "memory.limit_in_bytes"
        self.usage_file = "memory.current" if v2 else "memory.usage_in_bytes"
        self.original = self._read(self.knob) if self.knob else None
        self.written = None

    def start(self, p):
        """v1: the limit starts at the current usage; v2: nothing to set."""
        if self.knob:
            self.set_limit(scaled(None, 0, p, self.current()))

    def apply(self, factor, p):
        """Carries out one decision; returns what was done, for the log."""
        if self.knob:
            self.set_limit(scaled(self.limit(), factor, p, self.current()))
            return f"limit {self.written}"
        if factor >= 0:
            return "back off"
        amount = reclaim_bytes(self.current(), factor)
        try:
            with open(os.path.join(self.mem_dir, "memory.reclaim"), "w") as f:
                f.write(str(amount))
        except BlockingIOError:
            pass  # EAGAIN: the kernel reclaimed less than asked; the next probe asks again
        return f"reclaim {amount}"

    def _read(self, name):
        with open(os.path.join(self.mem_dir, name)) as f:
            return f.read().strip()

    def total(self):
        with open(os.path.join(self.psi_dir, "memory.pressure")) as f:
            return stall_total(f.read())

    def current(self):
        return int(self._read(self.usage_file))

    def limit(self):
        """The limit if it is still the one Senpai wrote, else None."""
        v = self._read(self.knob)
        return self.written if self.written is not None and v == str(self.written) else None

    def set_limit(self, value):
        with open(os.path.join(self.mem_dir, self.knob), "w") as f:
            f.write(str(value))
        self.written = value

    def restore(self):
        if not self.knob:
            return
        try:
            with open(os.path.join(self.mem_dir, self.knob), "w") as f:
                f.write(self.original)
        except OSError:
            pass  # the cgroup is gone


def open_cgroup(path, root):
    """`path` is a cgroup path (/a/b). v1 when ROOT/memory exists."""
    rel = path.strip("/")
    if os.path.isdir(os.path.join(root, "memory")):
        return Cgroup(os.path.join(root, "memory", rel), os.path.join(root, "unified", rel), v2=False)
    return Cgroup(os.path.join(root, rel), os.path.join(root, rel), v2=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cgroups", nargs="+", help="cgroup paths, e.g. /bench/noise-1")
    ap.add_argument("--cgroup-root", default="/sys/fs/cgroup")
    d = Params()
    ap.add_argument("--min-size", type=int, default=d.min_size)
    ap.add_argument("--max-size", type=int, default=d.max_size)
    ap.add_argument("--interval", type=int, default=d.interval)
    ap.add_argument("--pressure", type=int, default=d.pressure, help="target stall, µs per interval")
    ap.add_argument("--max-probe", type=float, default=d.max_probe)
    ap.add_argument("--max-backoff", type=float, default=d.max_backoff)
    ap.add_argument("--coeff-probe", type=int, default=d.coeff_probe)
    ap.add_argument("--coeff-backoff", type=int, default=d.coeff_backoff)
    a = ap.parse_args()
    p = Params(a.min_size, a.max_size, a.interval, a.pressure, a.max_probe, a.max_backoff,
               a.coeff_probe, a.coeff_backoff)
    stop = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.append(1))
    managed = []
    for path in a.cgroups:
        cg = open_cgroup(path, a.cgroup_root)
        managed.append((path, cg, Controller(p, cg.total())))
        cg.start(p)
    print(f"senpai: {len(managed)} cgroup(s), interval {p.interval} s, target {p.pressure} us", flush=True)
    try:
        while not stop:
            time.sleep(1)
            for path, cg, ctl in managed:
                try:
                    factor = ctl.tick(cg.total())
                    if factor is not None:
                        done = cg.apply(factor, p)
                        print(f"senpai: {path} adjust {factor:+.4f} {done}", flush=True)
                except OSError as e:
                    print(f"senpai: {path}: {e}", file=sys.stderr, flush=True)
    finally:
        for _, cg, _ in managed:
            cg.restore()
    return 0


if __name__ == "__main__":
    sys.exit(main())
