"""bench/peers: per-cell CSVs and plots, the summary table with the issue's
targets, and the parameters of the run. Pure functions of the result rows,
except for the writing."""
import csv
import json
import os
import statistics

import memextbench as mb

COLUMNS = ["mode", "round", "throughput", "p50", "p99", "p999", "requests",
           "noise_ops", "noise_p50", "noise_p99", "noise_slowdown_p50",
           "dram_mean_mib", "dram_max_mib", "swapin_mib", "swapout_mib", "zswpin_mib", "zswpout_mib",
           "tlb_shootdowns", "cpu_controller_s", "cpu_kswapd_s", "cpu_kdamond_s", "cpu_critical_s", "cpu_noise_s", "cpu_client_s",
           "damon_applied_mib",
           "crit_majflt", "crit_refault_anon", "crit_refault_file", "crit_mem_some_ms", "crit_mem_full_ms",
           "crit_cpu_some_ms", "crit_io_some_ms", "client_cpu_some_ms", "oom_kills", "window_s", "failed"]
NUMERIC = COLUMNS[2:-1]
COLORS = {"ideal": "tab:blue", "oracle": "tab:cyan", "oracle-split": "tab:olive", "split": "tab:gray", "linux": "tab:red", "limits": "tab:orange", "zswap": "tab:purple",
          "senpai": "tab:brown", "memext": "tab:green"}
P99_TARGET, TPUT_TARGET = 1.5, 0.85


def nearest_rank(xs, q, presorted=False):
    """The q-quantile of xs by nearest rank (None for no values)."""
    xs = xs if presorted else sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else None


def noise_service(ops):
    """The noise's service in a window, from [(kind, latency_ms, nominal_ms)]:
    operations completed, latency p50/p99, and for batch jobs the median of
    latency / nominal (1.0: the job ran as fast as it would alone)."""
    lat = [x for _, x, _ in ops]
    slow = [x / n for _, x, n in ops if n]
    r3 = lambda v: None if v is None else round(v, 3)  # noqa: E731
    return {"noise_ops": len(ops), "noise_p50": r3(nearest_rank(lat, 0.5)), "noise_p99": r3(nearest_rank(lat, 0.99)),
            "noise_slowdown_p50": r3(nearest_rank(slow, 0.5))}


def one_line(r):
    if r.get("failed"):
        return f"FAILED ({r['failed']}), OOM kills in the server: {r.get('oom_kills')}"
    f = lambda v, fmt: "-" if v is None else format(v, fmt)  # noqa: E731
    return (f"critical {r['throughput']:,.0f}/s p50 {f(r['p50'], '.2f')} p99 {f(r['p99'], '.2f')} "
            f"p99.9 {f(r['p999'], '.2f')} ms | noise {r['noise_ops']} ops p50 {f(r['noise_p50'], '.1f')} "
            f"p99 {f(r['noise_p99'], '.1f')} ms | DRAM {r['dram_mean_mib']:.0f}/{r['dram_max_mib']:.0f} MiB | "
            f"swap in/out {r['swapin_mib']:.0f}/{r['swapout_mib']:.0f} (zswap {r['zswpin_mib']:.0f}/{r['zswpout_mib']:.0f}) MiB | cpu ctl {r['cpu_controller_s']:.1f} "
            f"kswapd {r['cpu_kswapd_s']:.1f} kdamond {r['cpu_kdamond_s']:.1f} s | TLB shootdowns {f(r.get('tlb_shootdowns'), ',.0f')}")


MODE_ORDER = ["ideal", "oracle", "oracle-split", "split", "linux", "limits", "zswap", "senpai", "memext"]


def is_memext(mode):
    """memext itself or one of its variants (memext+KEY=VALUE): not a peer."""
    return mode == "memext" or mode.startswith("memext+")


def is_peer(mode):
    """What an operator could deploy instead: not memext, not the bounds and
    references (ideal; oracle: the noise paging itself out at the instant each
    sleep starts; oracle-split, split: the noise capped apart from the
    critical container)."""
    return not is_memext(mode) and mode not in ("ideal", "oracle", "oracle-split", "split")


def medians(rows):
    """Per mode (in MODE_ORDER), the median of each numeric column over the rounds."""
    out = {}
    modes = dict.fromkeys(r["mode"] for r in rows)
    for mode in sorted(modes, key=lambda m: MODE_ORDER.index(m) if m in MODE_ORDER else len(MODE_ORDER)):
        mine = [r for r in rows if r["mode"] == mode]
        med = {}
        for c in NUMERIC:
            vals = [r[c] for r in mine if r.get(c) is not None and not r.get("failed")]
            med[c] = statistics.median(vals) if vals else None
        med["rounds"] = len(mine)
        med["failed"] = "; ".join(r["failed"] for r in mine if r.get("failed"))
        if med["throughput"] is None:
            med["throughput"] = 0.0
        out[mode] = med
    return out


def verdict(med):
    """The issue's targets for one cell: memext vs ideal, and the peers that
    dominate memext (better critical p99 and noise service, no more DRAM). A
    mode whose noise completed nothing in the window served it worst of all."""
    m, i = med.get("memext"), med.get("ideal")
    v = {"p99_vs_ideal": None, "tput_vs_ideal": None, "dominated_by": [], "noise_starved": False}
    if m and i and m["p99"] is not None and i["p99"] and i["throughput"]:
        v["p99_vs_ideal"] = round(m["p99"] / i["p99"], 2)
        v["tput_vs_ideal"] = round(m["throughput"] / i["throughput"], 2)
    noise = lambda x: float("inf") if x["noise_p50"] is None else x["noise_p50"]  # noqa: E731
    if m:
        v["noise_starved"] = m["noise_p50"] is None
        for mode, p in med.items():
            if not is_peer(mode) or p["p99"] is None or m["p99"] is None:
                continue
            if p["p99"] < m["p99"] and noise(p) < noise(m) and p["dram_mean_mib"] <= m["dram_mean_mib"]:
                v["dominated_by"].append(mode)
    v["met"] = (v["p99_vs_ideal"] is not None and v["p99_vs_ideal"] <= P99_TARGET
                and v["tput_vs_ideal"] >= TPUT_TARGET and not v["dominated_by"] and not v["noise_starved"])
    return v


def write_cell(out, cell, rows):
    d = os.path.join(out, f"{cell[0]}-{cell[1]}")
    with open(os.path.join(d, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    plot_cell(os.path.join(out, f"{cell[0]}-{cell[1]}.png"), cell, medians(rows))


def plot_cell(path, cell, med):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    for mode, m in med.items():
        if m["p99"] is None or m["dram_mean_mib"] is None:
            continue
        noise = m["noise_p50"] or 0.0
        ax1.scatter(m["dram_mean_mib"], m["p99"], s=30 + min(600, noise / 10), color=COLORS.get(mode), label=mode,
                    alpha=0.6)
        ax1.annotate(mode, (m["dram_mean_mib"], m["p99"]), fontsize=7, xytext=(4, 4), textcoords="offset points")
        if m["noise_p50"] is not None:
            ax2.scatter(m["dram_mean_mib"], m["noise_p50"], s=60, color=COLORS.get(mode), label=mode)
    ax1.set(xlabel="DRAM used, mean over the window [MiB]", ylabel="critical p99 [ms]", yscale="log",
            title=f"{cell[0]} x {cell[1]}: critical (marker: noise p50)")
    ax2.set(xlabel="DRAM used, mean over the window [MiB]", ylabel="noise service p50 [ms]", yscale="log",
            title="the noise's own service")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, markerscale=0.4)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def summary_lines(rows_by_cell):
    """The summary table (markdown) and one verdict per cell."""
    lines = ["| cell | mode | throughput /s (x ideal) | p50 / p99 / p99.9 ms (p99 x ideal) | noise ops, p50 / p99 ms "
             "| DRAM mean / max MiB | swap in / out MiB (zswap) | CPU s: controller, kswapd, kdamond |",
             "|---|---|---|---|---|---|---|---|"]
    verdicts = {}
    for cell, rows in rows_by_cell.items():
        med = medians(rows)
        ideal = med.get("ideal")
        for mode, m in med.items():
            x = lambda k: (f" ({m[k] / ideal[k]:.2f}x)" if ideal and ideal.get(k) and m.get(k) is not None  # noqa: E731
                           else "")
            g = lambda v, fmt: "-" if v is None else format(v, fmt)  # noqa: E731
            if m["p99"] is None:
                lines.append(f"| {cell[0]} x {cell[1]} | {mode} | failed: {m['failed']} | | | | | |")
                continue
            lines.append(f"| {cell[0]} x {cell[1]} | {mode} | {m['throughput']:,.0f}{x('throughput')} | "
                         f"{g(m['p50'], '.2f')} / {g(m['p99'], '.2f')} / {g(m['p999'], '.2f')}{x('p99')} | "
                         f"{g(m['noise_ops'], '.0f')}, {g(m['noise_p50'], '.1f')} / {g(m['noise_p99'], '.1f')} | "
                         f"{m['dram_mean_mib']:.0f} / {m['dram_max_mib']:.0f} | "
                         f"{m['swapin_mib']:.0f} / {m['swapout_mib']:.0f} ({m['zswpin_mib']:.0f} / {m['zswpout_mib']:.0f}) | "
                         f"{m['cpu_controller_s']:.1f}, {m['cpu_kswapd_s']:.1f}, {m['cpu_kdamond_s']:.1f} |")
        verdicts[f"{cell[0]}-{cell[1]}"] = verdict(med)
    lines += ["", "| cell | memext p99 x ideal (<= 1.5) | memext throughput x ideal (>= 0.85) | "
              "peers better on p99 and noise with no more DRAM | targets met |", "|---|---|---|---|---|"]
    for cell, v in verdicts.items():
        met = "yes" if v["met"] else "no (the noise completed nothing)" if v["noise_starved"] else "no"
        lines.append(f"| {cell} | {v['p99_vs_ideal']} | {v['tput_vs_ideal']} | "
                     f"{', '.join(v['dominated_by']) or 'none'} | {met} |")
    return lines, verdicts


def load(out):
    """The rows of every cell of a results directory, as the run wrote them."""
    rows = {}
    for name in sorted(os.listdir(out)):
        path = os.path.join(out, name, "results.csv")
        if not os.path.isfile(path):
            continue
        with open(path) as f:
            cell_rows = [{k: (v if k in ("mode", "failed") else None if v == "" else float(v)) for k, v in r.items()}
                         for r in csv.DictReader(f)]
        rows[tuple(name.split("-", 1))] = cell_rows
    return rows


def replot(out):
    """Plots and summary again from a results directory's CSVs (its params kept)."""
    rows = load(out)
    for cell, cell_rows in rows.items():
        plot_cell(os.path.join(out, f"{cell[0]}-{cell[1]}.png"), cell, medians(cell_rows))
    with open(os.path.join(out, "params.json")) as f:
        record = json.load(f)
    p = record["params"]
    order = [(c, n) for c in p.get("critical", []) for n in p.get("noise", [])]
    rows = {cell: rows[cell] for cell in sorted(rows, key=lambda c: order.index(c) if c in order else len(order))}
    write_summary(out, rows, p, record["machine"])


def headline_lines(rows_by_cell, verdicts):
    """One line per cell: memext against ideal, the peer that served the critical
    workload best (by throughput), and the noise's p50 in memext, that peer and linux."""
    fmt = lambda v: "-" if v is None else f"{v / 1000:.1f} s" if v >= 1000 else f"{v:.1f} ms"  # noqa: E731
    lines = ["| cell | memext throughput / p99 vs ideal | best peer on the critical (throughput / p99 vs ideal) "
             "| noise p50: memext / that peer / linux | DRAM mean: memext / that peer MiB | targets |",
             "|---|---|---|---|---|---|"]
    for cell, rows in rows_by_cell.items():
        med, key = medians(rows), f"{cell[0]}-{cell[1]}"
        m, i, v = med.get("memext"), med.get("ideal"), verdicts[key]
        peers = [(mode, p) for mode, p in med.items()
                 if is_peer(mode) and p["p99"] is not None]
        if not (m and i and i["throughput"] and i["p99"] and peers) or m["p99"] is None:
            lines.append(f"| {cell[0]} x {cell[1]} | (incomplete) | | | | |")
            continue
        best, b = max(peers, key=lambda mp: mp[1]["throughput"])
        linux = med.get("linux", {}).get("noise_p50")
        met = "met" if v["met"] else "missed" + (f" ({', '.join(v['dominated_by'])} dominates)" if v["dominated_by"]
                                                 else " (noise starved)" if v["noise_starved"] else "")
        lines.append(f"| {cell[0]} x {cell[1]} | {m['throughput'] / i['throughput']:.2f}x / {m['p99'] / i['p99']:.1f}x | "
                     f"{best} {b['throughput'] / i['throughput']:.2f}x / {b['p99'] / i['p99']:.1f}x | "
                     f"{fmt(m['noise_p50'])} / {fmt(b['noise_p50'])} / {fmt(linux)} | "
                     f"{m['dram_mean_mib']:.0f} / {b['dram_mean_mib']:.0f} | {met} |")
    return lines


def write_summary(out, rows_by_cell, params, machine):
    rows_by_cell = {c: r for c, r in rows_by_cell.items() if r}
    lines, verdicts = summary_lines(rows_by_cell)
    lines += [""] + headline_lines(rows_by_cell, verdicts)
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write("`linux` here is Linux plus this machine's own DAMON reclaimer (pageout of memory idle 60 s), "
                "which is active in every mode with a swap area. Medians over the rounds.\n\n" + text)
    with open(os.path.join(out, "summary.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["cell"] + COLUMNS, extrasaction="ignore")
        w.writeheader()
        for cell, rows in rows_by_cell.items():
            w.writerows({"cell": f"{cell[0]}-{cell[1]}", **r} for r in rows)
    mb.write_json(os.path.join(out, "params.json"), {"params": params, "machine": machine, "verdicts": verdicts})
    print(text, end="")
    print(json.dumps(verdicts, indent=1))
