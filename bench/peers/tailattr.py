#!/usr/bin/env python3
"""Where a critical workload's tail comes from: its slow transactions lined up
with what else ran at that moment (issue 15). Reads one mode's round of a
bench/peers run:

  CELL/histograms/MODE-rN-timeline.csv   the critical workload per 0.1 s:
                                          transactions and the count over each
                                          threshold (PostgreSQL only);
  CELL/noise-MODE-rN.log                  the noise's wakes (a wake's touch runs
                                          from t - lat to t);
  OUT/memext-daemon.log                   (memext modes) knob writes that held
                                          the daemon's loop (`slow-write`: the
                                          kernel reclaiming in the writer) and
                                          read-backs;
  OUT.samples                             (optional) bench/peers/psampler.py beside
                                          the run: each container's swap every
                                          0.1 s (page-out: a noise container's
                                          swap rose; swap-in: it fell) and the
                                          server at its cap (failcnt rose).

Each 0.1 s bin gets the set of activities that overlapped it; the tail is
then split by that set: its share of the window, of the transactions and of
the slow ones, and the slow rate inside it. A p99 within X needs fewer than
1% of all transactions over X, so the rows that hold most of the slow ones are
where the tail is lost.

Usage: tailattr.py OUT --mode memext [--round 0] [--cell postgres-burst]
       [--over 1.0] [--samples OUT.samples]"""
import argparse
import collections
import datetime
import gzip
import json
import os
import signal

BIN_S = 0.1
ACTIVITIES = ("touch", "write", "readback", "pageout", "swapin", "cap")


def opener(path):
    return gzip.open(path, "rt") if path.endswith(".gz") else open(path)


def existing(path):
    for p in (path, path + ".gz"):
        if os.path.exists(p):
            return p
    return None


def read_timeline(lines, over):
    """{bin: (transactions, slow)} from a timeline CSV; slow = the count over
    `over` ms (one of its columns)."""
    rows = iter(lines)
    head = next(rows).strip().split(",")
    col = head.index(f"over_{over}ms")
    out = {}
    for line in rows:
        f = line.strip().split(",")
        if len(f) == len(head):
            out[round(float(f[0]) / BIN_S)] = (int(f[1]), int(f[col]))
    return out


def noise_touches(lines):
    """[(start, end)] of the noise's wakes (`NAME {json}` lines, op wake)."""
    out = []
    for line in lines:
        _, _, js = line.partition(" ")
        try:
            j = json.loads(js)
        except ValueError:
            continue
        if j.get("op") == "wake":
            out.append((j["t"] - j["lat"], j["t"]))
    return out


def epoch(ts):
    return datetime.datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


def daemon_intervals(lines):
    """{"write": [(start, end)], "readback": [(start, end)]} from the daemon's
    JSON log: a slow write ends at its timestamp and took `ms`; a read-back
    ends at its timestamp and took `seconds`."""
    out = {"write": [], "readback": []}
    for line in lines:
        try:
            e = json.loads(line)
        except ValueError:
            continue
        ev = e.get("event")
        if ev == "slow-write":
            t = epoch(e["timestamp"])
            out["write"].append((t - e["ms"] / 1e3, t))
        elif ev == "read-back":
            t = epoch(e["timestamp"])
            out["readback"].append((t - e["seconds"], t))
    return out


def sample_intervals(lines):
    """{"pageout", "swapin", "cap": [(start, end)]} from psampler lines `t name
    usage limit failcnt pgmajfault swap`: between two samples of a container
    (not the parent), swap rose by 1 MiB or more (page-out) or fell (swap-in);
    the parent's failcnt rose (the server hit its cap)."""
    last, out = {}, {"pageout": [], "swapin": [], "cap": []}
    for line in lines:
        f = line.split()
        if line.startswith("#") or len(f) < 7:
            continue
        t, name = float(f[0]), f[1]
        try:
            fail, swap = int(f[4]), int(f[6])
        except ValueError:
            continue
        if name in last:
            t0, fail0, swap0 = last[name]
            if name == "parent":
                if fail > fail0:
                    out["cap"].append((t0, t))
            elif swap >= swap0 + (1 << 20):
                out["pageout"].append((t0, t))
            elif swap < swap0:
                out["swapin"].append((t0, t))
        last[name] = (t, fail, swap)
    return out


def label_bins(bins, intervals):
    """{bin: frozenset of activities whose intervals overlap it}."""
    marks = collections.defaultdict(set)
    for what, spans in intervals.items():
        for a, b in spans:
            for k in range(int(a // BIN_S), int(b // BIN_S) + 1):
                if k in bins:
                    marks[k].add(what)
    return {k: frozenset(marks.get(k, ())) for k in bins}


def tally(timeline, groups):
    """{group: [bins, transactions, slow]}, each bin counted in every group
    `groups(activities)` gives for its activities."""
    agg = collections.defaultdict(lambda: [0, 0, 0])
    for k, (tx, slow) in timeline.items():
        for g in groups(k):
            a = agg[g]
            a[0] += 1
            a[1] += tx
            a[2] += slow
    return agg


def split_tail(timeline, labels):
    """Rows (activities, bins, transactions, slow), most slow first."""
    agg = tally(timeline, lambda k: (labels[k],))
    return sorted(((act, *v) for act, v in agg.items()), key=lambda r: -r[3])


def by_activity(timeline, labels):
    """Per activity (any bin it overlapped, alone or not): bins, transactions,
    slow; and 'none' for bins with nothing."""
    agg = tally(timeline, lambda k: labels[k] or ("none",))
    return {a: agg.get(a, [0, 0, 0]) for a in (*ACTIVITIES, "none")}


def report(timeline, labels, over):
    bins = len(timeline)
    tx = sum(v[0] for v in timeline.values())
    slow = sum(v[1] for v in timeline.values())
    pct = lambda n, d: 100.0 * n / d if d else 0.0  # noqa: E731

    def table(title, rows):
        out = ["", f"| {title} | share of the window | of the transactions | of the slow ones | slow rate in it |",
               "|---|---|---|---|---|"]
        return out + [f"| {name} | {pct(b, bins):.0f}% | {pct(t, tx):.0f}% | {pct(s, slow):.0f}% | {pct(s, t):.2f}% |"
                      for name, b, t, s in rows]
    alone = [(a, *v) for a, v in by_activity(timeline, labels).items() if v[0]]
    together = [("+".join(sorted(act)) or "none", *v) for act, *v in split_tail(timeline, labels)[:10]]
    return "\n".join([f"{bins} bins of {BIN_S} s, {tx} transactions, {slow} over {over} ms ({pct(slow, tx):.2f}%)",
                      *table("activity (alone or with others)", alone), *table("together", together)])


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under `| head`
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="the run's --out directory")
    ap.add_argument("--mode", required=True, help="the mode as in results.csv (memext, memext+fast_wakes=true, ...)")
    ap.add_argument("--round", type=int, default=0)
    ap.add_argument("--cell", default="postgres-burst")
    ap.add_argument("--over", default="1.0", help="the slow threshold in ms: a timeline column (default 1.0)")
    ap.add_argument("--samples", help="psampler.py's output beside the run (default OUT.samples if present)")
    a = ap.parse_args()
    cell = os.path.join(a.out, a.cell)
    tl_path = existing(os.path.join(cell, "histograms", f"{a.mode}-r{a.round}-timeline.csv"))
    if not tl_path:
        raise SystemExit(f"{cell}: no timeline for {a.mode} round {a.round} (PostgreSQL runs write one)")
    with opener(tl_path) as f:
        timeline = read_timeline(f, a.over)
    intervals = {}
    noise = existing(os.path.join(cell, f"noise-{a.mode}-r{a.round}.log"))
    if noise:
        with opener(noise) as f:
            intervals["touch"] = noise_touches(f)
    daemon = existing(os.path.join(a.out, "memext-daemon.log"))
    if daemon and a.mode.startswith("memext"):
        with opener(daemon) as f:
            intervals.update(daemon_intervals(f))
    samples = existing(a.samples or a.out.rstrip("/") + ".samples")
    if samples:
        with opener(samples) as f:
            intervals.update(sample_intervals(f))
    print(f"{a.out} {a.mode} r{a.round}: " + report(timeline, label_bins(timeline, intervals), a.over))


if __name__ == "__main__":
    main()
