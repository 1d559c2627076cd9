"""Where a measurement window's CPU went, sample by sample: who ran (the
critical container, its load client, the noise containers, the memext daemon,
kernel threads, idle) and what its kernel was doing (a push-out or a read-back
by madvise, reclaim for a limit write or for a charge, a swap-in fault, an
interrupt...). Issue 15's attribution at the level the cgroup counters cannot
give: the noise's and the daemon's seconds split by the work they did.

`Profile` runs `perf record -a -g` (the software CPU clock: no hardware
counters needed) for the window; at its end `perf script` is folded into
CPU-seconds by (who, what), with the leaf kernel functions of each who.

    python3 cpuprofile.py FILE.json        # print a saved profile's table
"""
import collections
import json
import os
import shutil
import signal
import subprocess
import sys
import threading

FREQ = 499  # samples a second per CPU (prime: not in step with the scheduler's tick)
WATCH_PERIOD = 0.5  # how often new processes' cgroups are read

# What a sample was doing, from its kernel frames: the first rule whose frames
# are on the stack (and, where given, one of its `needs` as well) names it.
# Interrupts first (they interrupt anything, idle included), then idle, then
# memory work by what started it, outermost cause first.
WHAT_RULES = [
    ("interrupt", {"common_interrupt", "sysvec_apic_timer_interrupt", "handle_softirqs", "__do_softirq",
                   "sysvec_call_function_single", "sysvec_reschedule_ipi", "asm_common_interrupt"}, None),
    ("idle", {"do_idle"}, None),
    ("push-out (madvise)", {"madvise_cold_or_pageout_pte_range", "madvise_pageout"}, None),
    ("read-back (madvise)", {"madvise_willneed", "swapin_walk_pmd_entry"}, None),
    ("reclaim: limit write", {"mem_cgroup_resize_max", "memory_max_write", "memory_high_write",
                              "memory_reclaim", "mem_cgroup_write"}, {"try_to_free_mem_cgroup_pages"}),
    ("reclaim: charge", {"try_charge_memcg"}, {"try_to_free_mem_cgroup_pages"}),
    ("reclaim: kswapd", {"kswapd"}, None),
    ("reclaim: direct", {"try_to_free_pages"}, None),
    ("swap-in fault", {"do_swap_page"}, None),
    ("page fault", {"exc_page_fault", "asm_exc_page_fault"}, None),
    ("syscall", {"do_syscall_64"}, None),
]
USER, KERNEL = "user", "kernel other"

KERNEL_THREADS = ("kswapd", "kworker", "ksoftirqd", "kcompactd", "khugepaged", "kdamond", "rcu", "migration",
                  "jbd2", "kthreadd", "zswap")


def what(frames):
    """The category of one sample from its symbol names (leaf first); samples
    with no kernel frame are user time."""
    on = set(frames)
    for name, any_of, needs in WHAT_RULES:
        if on & any_of and (needs is None or on & needs):
            return name
    return KERNEL if frames else USER


def who(comm, pid, cgroup_of, roles):
    """The party a sample belongs to: by pid (`roles["pids"]`: {pid: name}),
    by its process's CPU cgroup (`roles["cgroups"]`: [(path, name)], the
    first that is it or holds it), else by its name."""
    if pid == 0:
        return "idle"
    if pid in roles.get("pids", {}):
        return roles["pids"][pid]
    cg = cgroup_of.get(pid)
    if cg is not None:
        for prefix, name in roles.get("cgroups", []):
            if cg == prefix or cg.startswith(prefix + "/"):
                return name
    if comm.startswith("memext"):
        return "memext"
    if comm.startswith(KERNEL_THREADS):
        return "kernel threads"
    return "other"


def parse_script(text):
    """`perf script -F comm,pid,tid,ip,sym` output -> [(comm, pid, [kernel symbols, leaf first])].
    A sample is a header line `comm pid/tid` then one `ip sym` line per frame;
    kernel frames are those with a kernel address (ffff...)."""
    samples, cur = [], None
    for line in text.splitlines():
        if not line.strip():
            if cur:
                samples.append(cur)
            cur = None
            continue
        if not line[0].isspace():
            head = line.rsplit(None, 1)
            if len(head) != 2 or "/" not in head[1]:
                continue
            pid = head[1].split("/")[0]
            cur = (head[0].strip(), int(pid) if pid.isdigit() else -1, [])
        elif cur:
            parts = line.split(None, 1)
            if len(parts) == 2 and parts[0].startswith("ffff"):
                cur[2].append(parts[1].split("+")[0].strip())
    if cur:
        samples.append(cur)
    return samples


def fold(samples, cgroup_of, roles, freq=FREQ, top=12):
    """CPU-seconds by who and what; each who's busiest kernel leaves, and
    for each (who, what) its busiest kernel paths (leaf and four callers)."""
    by = collections.defaultdict(collections.Counter)
    leaves = collections.defaultdict(collections.Counter)
    paths = collections.defaultdict(collections.Counter)
    unplaced = collections.Counter()  # the commands of "other": what no role held
    for comm, pid, frames in samples:
        w, k = who(comm, pid, cgroup_of, roles), what(frames)
        by[w][k] += 1
        if w == "other":
            unplaced[f"{comm} ({'no cgroup seen' if pid not in cgroup_of else cgroup_of[pid]})"] += 1
        if frames:
            leaves[w][frames[0]] += 1
            paths[f"{w} / {k}"][" < ".join(frames[:5])] += 1

    def secs(c):
        return [(s, round(n / freq, 2)) for s, n in c.most_common(top)]
    return {
        "freq": freq,
        "samples": len(samples),
        "seconds": {w: {k: round(n / freq, 2) for k, n in c.most_common()} for w, c in by.items()},
        "leaves": {w: secs(c) for w, c in leaves.items()},
        "paths": {wk: secs(c) for wk, c in sorted(paths.items())},
        "other": secs(unplaced),
    }


def table(profile):
    """A saved profile as a text table: rows who, columns what, CPU-seconds."""
    secs = profile["seconds"]
    cols = [c for c, _, _ in WHAT_RULES] + [KERNEL, USER]
    cols = [c for c in cols if any(c in row for row in secs.values())]
    rows = sorted(secs, key=lambda w: -sum(secs[w].values()))
    widths = [len(c) + 2 for c in cols]
    lines = ["who".ljust(15) + "total".rjust(8) + "".join(c.rjust(n) for c, n in zip(cols, widths))]
    for w in rows:
        r = secs[w]
        lines.append(w.ljust(15) + f"{sum(r.values()):8.2f}"
                     + "".join(f"{r.get(c, 0):{n}.2f}" for c, n in zip(cols, widths)))
    return "\n".join(lines)


def cpu_cgroup(pid):
    """A process's CPU cgroup path (v1 `cpu` controller, else the unified one)."""
    try:
        with open(f"/proc/{pid}/cgroup") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    unified = None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "cpu" in controllers.split(","):
            return path
        if controllers == "":
            unified = path
    return unified


class Profile:
    """`with Profile(path_json, roles): ...` records every CPU for the body's
    duration and writes the folded profile to `path_json` (and its table
    beside it, `.txt`). The raw record is removed once folded."""

    def __init__(self, path_json, roles):
        if not shutil.which("perf"):
            raise RuntimeError("--profile needs perf (Debian package linux-perf)")
        self.path, self.roles = path_json, roles
        self.data = path_json[:-len(".json")] + ".perf.data"

    def __enter__(self):
        self.proc = subprocess.Popen(["perf", "record", "-a", "-g", "-F", str(FREQ), "-q", "-o", self.data],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # Processes that end within the window (a load client's connections)
        # are gone by its end: their cgroups are read while they run.
        self.cgroup_of, self.stop = {}, threading.Event()
        self.watcher = threading.Thread(target=self._watch, daemon=True)
        self.watcher.start()
        return self

    def _watch(self):
        # Every pass reads every process again: one just forked is moved to
        # its cgroup after it is first seen (the load client's preexec_fn).
        while True:
            for pid in (int(p) for p in os.listdir("/proc") if p.isdigit()):
                try:
                    cg = cpu_cgroup(pid)
                except ValueError:  # a line being rewritten as it moves
                    continue
                if cg is not None:
                    self.cgroup_of[pid] = cg
            if self.stop.wait(WATCH_PERIOD):
                return

    def __exit__(self, *exc):
        self.stop.set()
        self.watcher.join()
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        try:
            text = subprocess.run(["perf", "script", "-i", self.data, "-F", "comm,pid,tid,ip,sym"],
                                  capture_output=True, text=True, timeout=600).stdout
            profile = fold(parse_script(text), self.cgroup_of, self.roles)
            with open(self.path, "w") as f:
                json.dump(profile, f, indent=1)
            with open(self.path[:-len(".json")] + ".txt", "w") as f:
                f.write(table(profile) + "\n")
        finally:
            if os.path.exists(self.data):
                os.remove(self.data)


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0 if len(sys.argv) == 2 else 2)
    with open(sys.argv[1]) as f:
        print(table(json.load(f)))
