#!/usr/bin/env python3
"""Woken contexts' read-backs (reason woke, onset or call): how long each waited in
the mover's queue (from `bringing-back` to its read's start: the `read-back`
event's time less its seconds), and, for those that waited over 10 ms, what the
mover was doing when it was asked: another woken context's read-back, or a
predicted one's (periodic, refill, ...) read-back or map-back.

Usage: qwait.py RUN_DIR...   (bench/faas results with a daemon log)"""
import collections
import sys

from daemonlog import events


def jobs_of(d):
    asked, jobs = {}, []  # job: [asked, read start, read end, fn, reason, end with map-backs]
    for ts, fn, e in events(d):
        ev = e.get('event')
        if ev == 'bringing-back':
            asked[fn] = (ts, e.get('reason'))
        elif ev == 'read-back':
            start = ts - float(e['seconds'])
            if fn in asked:
                a, reason = asked.pop(fn)
                jobs.append([a, start, ts, fn, reason, ts])
            else:  # a paused predicted read-back going on
                jobs.append([start, start, ts, fn, 'resumed', ts])
        elif ev in ('mapped-back', 'mapped-kept') and jobs and jobs[-1][3] == fn:
            jobs[-1][5] = ts
    return jobs


URGENT = ('woke', 'onset', 'call')
for d in sys.argv[1:]:
    jobs = jobs_of(d)
    waits, behind = [], collections.Counter()
    for j in jobs:
        if j[4] not in URGENT:
            continue
        w = j[1] - j[0]
        waits.append(w)
        if w <= 0.010:
            continue
        running = [k for k in jobs if k is not j and k[1] <= j[0] < k[5]]
        if not running:
            behind['nothing seen'] += 1
            continue
        k = running[-1]
        kind = 'woken' if k[4] in URGENT else 'predicted'
        behind[f"{kind} {'read' if j[0] < k[2] else 'map'}"] += 1
    waits.sort()
    q = lambda p: 1e3 * waits[min(len(waits) - 1, int(p * len(waits)))]
    print(f"{d.rstrip('/').split('/')[-1]}: {len(waits)} woken read-backs, waited p50 {q(.5):.1f} "
          f"p90 {q(.9):.1f} max {1e3 * waits[-1]:.0f} ms; over 10 ms {sum(w > .01 for w in waits)}, "
          f"over 30 ms {sum(w > .03 for w in waits)}; behind: "
          + ", ".join(f"{k} {v}" for k, v in sorted(behind.items())))
