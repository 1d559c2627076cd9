"""A bench/faas run's calls and its daemon's log events, for this session's scripts.

`calls(run)`: {function: [call row, ...]} in time order (rows of calls-*.csv);
`events(run, names)`: (function, seconds from the trace's start, event dict) for each log event named in
`names` (all if None) of a function of the run, in log order; `lines(run)`: every event; `cgroups(run)`."""
import collections
import csv
import datetime
import glob
import gzip
import json

RECORDED = ("woke", "onset", "warm-call", "call")  # transitions the engine records in a history


def _one(run, pattern):
    return sorted(glob.glob(f"{run}/{pattern}"))[0]


def calls(run):
    out = collections.defaultdict(list)
    for r in csv.DictReader(open(_one(run, "calls-*.csv"))):
        out[r["function"]].append(r)
    for rows in out.values():
        rows.sort(key=lambda r: float(r["t"]))
    return out


def cgroups(run):
    """{function: its cgroup's path}, and the trace's start (epoch seconds)."""
    d = json.load(open(_one(run, "functions-*.json")))
    return d["cgroups"], d["trace_start_epoch"]


def lines(run):
    """(seconds from the trace's start, event dict) for every line of the daemon's log."""
    _, t0 = cgroups(run)
    logf = _one(run, "memext*-daemon-*.log*")
    with (gzip.open if logf.endswith(".gz") else open)(logf, "rt") as f:
        for line in f:
            if not line.startswith("{"):
                continue  # a plain line: the daemon's last error, as bench/faas tore its cgroups down
            j = json.loads(line)
            ts = datetime.datetime.fromisoformat(j["timestamp"].replace("Z", "+00:00")).timestamp() - t0
            yield ts, j


def events(run, names=None):
    byhash = {v.split("/")[-1]: k for k, v in cgroups(run)[0].items()}
    for ts, j in lines(run):
        if names is not None and j.get("event") not in names:
            continue
        fn = byhash.get(j.get("context", "").split("/")[-1])
        if fn:
            yield fn, ts, j
