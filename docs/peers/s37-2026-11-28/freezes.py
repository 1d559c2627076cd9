#!/usr/bin/env python3
"""Why the daemon froze each context, per memext run of a bench/peers
invocation (the daemon's log, split at each daemon start as daemonruns.py
does): at a wake or onset seen in the same tick (queued for room), or
while it ran or slept (out of its turn); and how long each freeze lasted
(frozen to thawed, median and max, s).

  python3 freezes.py DIR..."""
import datetime
import os
import re
import statistics
import sys

import gzip
import json


def ts(s):
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


def daemon_runs(log):
    runs = []
    lines = gzip.open(log + ".gz", "rt") if os.path.exists(log + ".gz") else open(log)
    for line in lines:
        if '"memext daemon: cgroup' in line:
            runs.append([])
            continue
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if runs and d.get("event") in ("woke", "onset", "frozen", "thawed"):
            runs[-1].append((ts(d["timestamp"]), d["event"], d.get("context", "")))
    return runs


def freezes(events):
    at_wake = out_of_turn = 0
    last_transition = {}
    frozen_at = {}
    spans = []
    for t, ev, c in events:
        if ev in ("woke", "onset"):
            last_transition[c] = t
        elif ev == "frozen":
            if t - last_transition.get(c, -1e9) < 0.1:
                at_wake += 1
            else:
                out_of_turn += 1
            frozen_at[c] = t
        elif ev == "thawed" and c in frozen_at:
            spans.append(t - frozen_at.pop(c))
    med = statistics.median(spans) if spans else 0
    return at_wake, out_of_turn, med, max(spans, default=0)


def main(dirs):
    print("| run | cell | mode | frozen at a wake or onset | frozen as it ran or slept | frozen s, median / max |")
    print("|---|---|---|---|---|---|")
    for d in dirs:
        d = os.path.normpath(d)
        progress = os.path.join(d, "run.log") if os.path.exists(os.path.join(d, "run.log")) else d + ".out"
        modes = re.findall(r"\] \[\d+/\d+\] (\S+) x (\S+), (memext\S*), round", open(progress).read())
        for (crit, noise, mode), ev in zip(modes, daemon_runs(os.path.join(d, "memext-daemon.log"))):
            w, o, med, mx = freezes(ev)
            print(f"| {os.path.basename(d)} | {crit} x {noise} | {mode} | {w} | {o} | {med:.1f} / {mx:.1f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
