#!/usr/bin/env python3
"""bench/faas's invocation trace: which function is called when, with the
shape public serverless traces report.

Azure Functions' production trace (Shahrad et al., "Serverless in the Wild",
USENIX ATC 2020) and Huawei's (Joosen et al., SoCC 2023) agree on what
matters for memory: most functions are invoked rarely (in Azure, 45% of
applications at most once an hour, 81% at most once a minute), the rates
span orders of magnitude, timer-triggered functions are a large share of the
functions but few of the invocations and are strictly periodic (inter-arrival
coefficient of variation ~0), and the rest range from Poisson-like (CV ~1) to
bursty (CV well above 1).

Three classes, their shares a parameter (default 30% timer, 50% Poisson, 20%
bursty, as the issue's trial used), each function's rate drawn log-uniformly
so that most are rare and a few are frequent:

  timer    period uniform in [timer_min, timer_max] s, first call at a random
           phase within one period, each call late by up to timer_jitter s
           (a scheduler's dispatch delay)
  poisson  exponential inter-arrivals, mean log-uniform in
           [poisson_min, poisson_max] s
  bursty   bursts arrive as a Poisson process (mean gap log-uniform in
           [burst_gap_min, burst_gap_max] s); a burst is 1 + geometric
           (mean burst_size) calls, exponential gaps of mean burst_spacing s

A trace is a pure function of its parameters (seed included): the bench saves
the parameters with its results, and `generate(params)` gives the same trace
again. Run alone it prints a summary:

  python3 bench/faas/trace.py --functions 100 --seconds 300 --seed 1 [--out trace.json]
"""
import argparse
import dataclasses
import json
import math
import random
import statistics
import sys

CLASSES = ("timer", "poisson", "bursty")


@dataclasses.dataclass(frozen=True)
class Params:
    functions: int = 100
    seconds: float = 300.0
    seed: int = 1
    timer_share: float = 0.3
    poisson_share: float = 0.5
    bursty_share: float = 0.2
    timer_min: float = 30.0
    timer_max: float = 120.0
    timer_jitter: float = 0.5
    poisson_min: float = 20.0
    poisson_max: float = 600.0
    burst_gap_min: float = 60.0
    burst_gap_max: float = 600.0
    burst_size: float = 4.0
    burst_spacing: float = 0.5

    def check(self):
        """Raises ValueError naming the first parameter out of range."""
        if self.functions < 1:
            raise ValueError(f"functions must be at least 1, not {self.functions}")
        if not self.seconds > 0:
            raise ValueError(f"seconds must be positive, not {self.seconds}")
        shares = (self.timer_share, self.poisson_share, self.bursty_share)
        if min(shares) < 0 or not math.isclose(sum(shares), 1.0, abs_tol=1e-6):
            raise ValueError(f"the class shares must be >= 0 and sum to 1, not {shares}")
        for lo, hi, name in ((self.timer_min, self.timer_max, "timer"),
                             (self.poisson_min, self.poisson_max, "poisson"),
                             (self.burst_gap_min, self.burst_gap_max, "burst_gap")):
            if not 0 < lo <= hi:
                raise ValueError(f"{name}_min and {name}_max: 0 < min <= max, not {lo}, {hi}")
        if self.timer_jitter < 0 or self.burst_size < 0 or self.burst_spacing <= 0:
            raise ValueError("timer_jitter >= 0, burst_size >= 0, burst_spacing > 0")


@dataclasses.dataclass
class Function:
    name: str
    cls: str
    # timer: period; poisson: mean inter-arrival; bursty: mean gap between bursts (s)
    mean_gap: float


@dataclasses.dataclass
class Trace:
    params: Params
    functions: list
    # (seconds from the start, index into functions), in time order
    calls: list

    def to_json(self):
        return {"parameters": dataclasses.asdict(self.params),
                "functions": [dataclasses.asdict(f) for f in self.functions],
                "calls": [[round(t, 6), i] for t, i in self.calls]}


def class_counts(p):
    """How many functions of each class: the shares rounded, the remainder
    to the largest share."""
    counts = [int(p.functions * s) for s in (p.timer_share, p.poisson_share, p.bursty_share)]
    largest = max(range(3), key=lambda k: (p.timer_share, p.poisson_share, p.bursty_share)[k])
    counts[largest] += p.functions - sum(counts)
    return dict(zip(CLASSES, counts))


def log_uniform(rng, lo, hi):
    return math.exp(rng.uniform(math.log(lo), math.log(hi)))


def _timer_calls(rng, f, p):
    t = rng.uniform(0, f.mean_gap)
    while t < p.seconds:
        yield t + rng.uniform(0, p.timer_jitter)
        t += f.mean_gap


def _poisson_calls(rng, f, p):
    t = rng.expovariate(1 / f.mean_gap)
    while t < p.seconds:
        yield t
        t += rng.expovariate(1 / f.mean_gap)


def _bursty_calls(rng, f, p):
    t = rng.expovariate(1 / f.mean_gap)
    while t < p.seconds:
        extra = 0
        # geometric number of extra calls with mean burst_size
        q = p.burst_size / (1 + p.burst_size)
        while rng.random() < q:
            extra += 1
        u = t
        for _ in range(1 + extra):
            yield u
            u += rng.expovariate(1 / p.burst_spacing)
        t += rng.expovariate(1 / f.mean_gap)


def generate(p):
    """The trace of `p` (the same for the same parameters)."""
    p.check()
    rng = random.Random(p.seed)
    ranges = {"timer": (p.timer_min, p.timer_max), "poisson": (p.poisson_min, p.poisson_max),
              "bursty": (p.burst_gap_min, p.burst_gap_max)}
    functions = []
    for cls, n in class_counts(p).items():
        lo, hi = ranges[cls]
        for _ in range(n):
            gap = rng.uniform(lo, hi) if cls == "timer" else log_uniform(rng, lo, hi)
            functions.append(Function(f"fn{len(functions):04d}", cls, round(gap, 3)))
    gen = {"timer": _timer_calls, "poisson": _poisson_calls, "bursty": _bursty_calls}
    calls = []
    for i, f in enumerate(functions):
        # One stream per function, so that a change to one class's
        # parameters leaves the others' calls as they were.
        frng = random.Random(f"{p.seed}/{f.name}")
        calls.extend((t, i) for t in gen[f.cls](frng, f, p) if t < p.seconds)
    calls.sort()
    return Trace(p, functions, calls)


def inter_arrival_cv(times):
    """Coefficient of variation of the gaps between sorted `times` (None for
    fewer than three calls)."""
    gaps = [b - a for a, b in zip(times, times[1:])]
    if len(gaps) < 2 or statistics.mean(gaps) == 0:
        return None
    return statistics.pstdev(gaps) / statistics.mean(gaps)


def summary(trace):
    """Per class: functions, calls, median calls per function, median
    inter-arrival CV."""
    per_fn = {i: [] for i in range(len(trace.functions))}
    for t, i in trace.calls:
        per_fn[i].append(t)
    out = {}
    for cls in CLASSES:
        idx = [i for i, f in enumerate(trace.functions) if f.cls == cls]
        if not idx:
            continue
        cvs = [cv for cv in (inter_arrival_cv(per_fn[i]) for i in idx) if cv is not None]
        out[cls] = {"functions": len(idx), "calls": sum(len(per_fn[i]) for i in idx),
                    "median_calls_per_function": statistics.median(len(per_fn[i]) for i in idx),
                    "median_cv": round(statistics.median(cvs), 2) if cvs else None}
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    for field in dataclasses.fields(Params):
        ap.add_argument("--" + field.name.replace("_", "-"), type=field.type,
                        default=field.default, help=f"(default {field.default})")
    ap.add_argument("--out", help="write the trace (parameters, functions, calls) as JSON here")
    a = vars(ap.parse_args(argv))
    out = a.pop("out")
    try:
        p = Params(**a)
        trace = generate(p)
    except ValueError as e:
        ap.error(str(e))
    if out:
        with open(out, "w") as f:
            json.dump(trace.to_json(), f)
    print(f"{len(trace.calls)} calls of {p.functions} functions in {p.seconds:.0f} s (seed {p.seed})")
    for cls, s in summary(trace).items():
        print(f"  {cls:8} {s['functions']:4} functions {s['calls']:6} calls, median "
              f"{s['median_calls_per_function']} per function, inter-arrival CV {s['median_cv']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
