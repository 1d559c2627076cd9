#!/usr/bin/env python3
"""Does another process's page-fault storm slow the wake-ups of processes
that take no fault? Two processes pass one byte back and forth over a Unix
socket pair (a warm call's way to its handler and back, without the work),
each sleeping in recv between messages, every INTERVAL ms for SECONDS s;
the round trips are timed while the machine is otherwise idle, while a
third process faults new anonymous memory in (MIB MiB, written a byte a
page, unmapped, again: a cold call's page faults without the tier), and
while it writes memory it already has (CPU alone, no fault). Rotated
ROUNDS times. Prints each condition's round-trip p50/p99/max and the share
over 1 ms.

Usage: wakeup.py [ROUNDS [SECONDS [MIB]]]   (defaults 3 5 256)"""
import mmap
import multiprocessing as mp
import os
import socket
import statistics
import sys
import time

PAGE = 4096
INTERVAL = 0.002


def echo(sock):
    while True:
        b = sock.recv(1)
        if not b:
            return
        sock.send(b)


def storm(kind, mib, stop):
    size = mib << 20
    ones = b"\x01" * (size // PAGE)
    keep = mmap.mmap(-1, size) if kind == "busy" else None
    while not stop.is_set():
        m = keep or mmap.mmap(-1, size)
        memoryview(m).__setitem__(slice(None, None, PAGE), ones)
        if keep is None:
            m.close()


def round_trips(sock, seconds):
    out, end = [], time.perf_counter() + seconds
    while time.perf_counter() < end:
        t = time.perf_counter()
        sock.send(b"x")
        sock.recv(1)
        out.append((time.perf_counter() - t) * 1e6)
        time.sleep(INTERVAL)
    return out


def main(argv):
    if argv[:1] in (["-h"], ["--help"]) or len(argv) > 3:
        sys.exit(__doc__)
    try:
        rounds, seconds, mib = (int(a) for a in (argv + ["3", "5", "256"][len(argv):]))
        if min(rounds, seconds, mib) < 1:
            raise ValueError
    except ValueError:
        sys.exit("wakeup.py: ROUNDS, SECONDS and MIB must be whole numbers above 0")
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    server = mp.Process(target=echo, args=(b,), daemon=True)
    server.start()
    conds = ["idle", "faults", "busy"]
    got = {c: [] for c in conds}
    for r in range(rounds):
        for k in range(len(conds)):
            c = conds[(k + r) % len(conds)]
            stop, p = mp.Event(), None
            if c != "idle":
                p = mp.Process(target=storm, args=(c, mib, stop), daemon=True)
                p.start()
                time.sleep(0.5)
            rt = round_trips(a, seconds)
            if p:
                stop.set()
                p.join(10)
            got[c] += rt
            print(f"round {r + 1} {c:7s} p50 {statistics.median(rt):8.0f} us", flush=True)
    a.close()
    server.join(5)
    print("\n| while | round trips | p50 | p99 | max | over 1 ms |\n|---|---|---|---|---|---|")
    for c in conds:
        v = sorted(got[c])
        over = sum(1 for x in v if x > 1000)
        print(f"| {c} | {len(v)} | {v[len(v) // 2]:.0f} us | {v[int(len(v) * 0.99)]:.0f} us | {v[-1]:.0f} us"
              f" | {100 * over / len(v):.1f}% |")


if __name__ == "__main__":
    main(sys.argv[1:])
