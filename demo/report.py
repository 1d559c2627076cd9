"""The first run's report: what demo/firstrun.py measured, as tables and a
plot. Pure functions of the samples (tested in test_report.py), no I/O but
the plot's file."""
import math

MIB = 1 << 20


def mib(n):
    return f"{n / MIB:.0f} MiB"


def dram_table(snapshots, names, cap):
    """DRAM per container and in total at each snapshot: `snapshots` is a
    list of (label, {name: (resident bytes, swapped bytes)}). One row per
    container, one column per snapshot: its resident memory, and what of it
    sits in the swap tiers in brackets."""
    head = ["container", *[label for label, _ in snapshots]]
    rows = []
    for name in names:
        row = [name]
        for _, snap in snapshots:
            res, swp = snap.get(name, (0, 0))
            row.append(f"{mib(res)} ({mib(swp)} out)" if swp >= MIB else mib(res))
        rows.append(row)
    rows.append(["total", *[mib(sum(r for r, _ in snap.values())) for _, snap in snapshots]])
    rows.append(["cap", *[mib(c) if c else "none" for c in cap]])
    return _table(head, rows)


def wake_table(wakes):
    """The same idle container's wake in each mode: `wakes` is a list of
    (mode, {latency_s, handler_ms, major_faults, swapped_before}), the first
    the reference the others are compared with."""
    head = ["wake of the idle container", "call answered in", "its handler", "major faults",
            "swapped out before", "vs " + wakes[0][0]]
    ref = wakes[0][1]["latency_s"]
    rows = [[mode, f"{w['latency_s'] * 1e3:.0f} ms", f"{w['handler_ms']:.0f} ms", f"{w['major_faults']:,}",
             mib(w["swapped_before"]), f"{ref / w['latency_s']:.1f}x faster" if w["latency_s"] > 0 else "-"]
            for mode, w in wakes]
    return _table(head, rows)


def critical_table(phases):
    """The critical container's calls per phase: `phases` is a list of
    (label, [latency s, ...]); p50 and p99 in ms and the number of calls."""
    head = ["critical container's calls", "calls", "p50", "p99"]
    rows = []
    for label, lat in phases:
        if lat:
            rows.append([label, str(len(lat)), f"{percentile(lat, 0.5) * 1e3:.1f} ms",
                         f"{percentile(lat, 0.99) * 1e3:.1f} ms"])
        else:
            rows.append([label, "0", "-", "-"])
    return _table(head, rows)


def percentile(values, q):
    """The nearest-rank q-quantile (q in (0, 1])."""
    s = sorted(values)
    return s[max(0, min(len(s) - 1, math.ceil(q * len(s) - 1e-9) - 1))]


def phase_of(t, marks):
    """The label of the phase time `t` falls in: `marks` are (start, label)
    in time order; None before the first."""
    label = None
    for start, name in marks:
        if t >= start:
            label = name
    return label


def split_by_phase(points, marks):
    """[(t, value)] grouped as [(label, [value, ...])] in the marks' order."""
    groups = {name: [] for _, name in marks}
    for t, v in points:
        p = phase_of(t, marks)
        if p is not None:
            groups[p].append(v)
    return list(groups.items())


def live_line(t, phase, snap, names, cap):
    """One line of the live view: the phase and each container's DRAM."""
    cells = "  ".join(f"{n} {snap.get(n, (0, 0))[0] / MIB:4.0f}M" for n in names)
    total = sum(r for r, _ in snap.values())
    return f"[{t:5.0f} s] {phase:<8} {cells}  | total {total / MIB:.0f}M of {mib(cap) if cap else 'no cap'}"


def _table(head, rows):
    width = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]

    def line(r):
        return "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(r, width)))
    return "\n".join([line(head), "  ".join("-" * w for w in width), *map(line, rows)]) + "\n"


def plot(samples, names, marks, wakes, path):
    """A PNG of DRAM per container over time (stacked), the cap, the phases
    and the wakes. `samples` is [(t, {name: (resident, swapped)}, cap)]."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = [s[0] for s in samples]
    stacks = [[s[1].get(n, (0, 0))[0] / MIB for s in samples] for n in names]
    fig, ax = plt.subplots(figsize=(8, 4.2), dpi=100)
    ax.stackplot(t, stacks, labels=names, alpha=0.85)
    ax.step(t, [s[2] / MIB if s[2] else float("nan") for s in samples], where="post", color="black",
            linestyle="--", linewidth=1.2, label="cap")
    top = max(sum(col) for col in zip(*stacks)) if samples else 1
    for start, label in marks:
        ax.axvline(start, color="grey", linewidth=0.8)
        ax.text(start, top * 1.02, f" {label}", fontsize=8, va="bottom")
    for when, label in wakes:
        ax.annotate(label, (when, 0), xytext=(when, top * 0.45), fontsize=8, ha="center",
                    arrowprops={"arrowstyle": "->", "color": "red"}, color="red")
    ax.set_xlabel("seconds")
    ax.set_ylabel("DRAM (MiB)")
    ax.set_ylim(0, top * 1.12)
    ax.set_title("memext first run: DRAM per container", fontsize=10)
    ax.legend(loc="upper right", fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
