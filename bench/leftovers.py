"""What a killed bench run left behind, found and removed before the next run.

A bench undoes everything it set up when it ends, also on SIGINT/SIGTERM
(memextbench.Cleanup). A run killed outright (SIGKILL, a session that ends
under it) cannot: its swap file stays active, its daemon's knobs stay written,
its cgroups stay. The next bench, or the test suite, would then run beside a
stranger's swap. Every run works in /var/tmp/memext-bench-NAME-PID, so what a
dead run left is found by its directory: `memext restore` and `memext tiers
down` with the configs it wrote there (the daemon's ledger and the tiers' state
say what to undo), then the directory and the bench's empty cgroups go.

Only runs whose process is gone are touched; a run still alive (another bench
at the same time) is left alone.
"""

import os
import re
import subprocess

WORK_ROOT = "/var/tmp"
_WORK = re.compile(r"memext-bench-(?P<name>[a-z0-9]+)-(?P<pid>[0-9]+)")


def work_dirs(names):
    """The bench work directories among directory entry `names`: (name, bench,
    pid) for each memext-bench-BENCH-PID."""
    out = []
    for n in names:
        m = _WORK.fullmatch(n)
        if m:
            out.append((n, m["name"], int(m["pid"])))
    return out


def is_bench_process(cmdline, cwd=""):
    """Whether a process's /proc/PID/cmdline (NUL-separated), started in
    directory `cwd`, runs one of the benches' Python scripts
    (bench/scale/readahead.py works in a directory named after itself; `python3
    run.py` from inside bench/faas runs bench/faas/run.py): a pid reused by
    anything else does not keep a dead run's leftovers alive."""
    args = cmdline.split("\0")
    if not args or not os.path.basename(args[0]).startswith("python"):
        return False
    scripts = (os.path.normpath(os.path.join(cwd, a)) for a in args[1:] if a.endswith(".py"))
    return any(re.search(r"(^|/)bench/[a-z0-9]+/[a-z0-9_]+\.py$", s) for s in scripts)


def swap_files_under(proc_swaps, work):
    """The swap areas listed in /proc/swaps text `proc_swaps` that lie under
    directory `work`."""
    prefix = work.rstrip("/") + "/"
    return [line.split()[0] for line in proc_swaps.splitlines()[1:]
            if line.split() and line.split()[0].startswith(prefix)]


def _alive(pid):
    try:
        with open(f"/proc/{pid}/cmdline") as f:
            cmdline = f.read()
    except OSError:
        return False
    try:
        cwd = os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        cwd = ""
    return is_bench_process(cmdline, cwd)


def _read(path):
    with open(path) as f:
        return f.read()


def _memext(memext_bin, config, *args):
    return subprocess.run([memext_bin, "--config", config, *args], capture_output=True, text=True)


def _empty_cgroup_tree(top):
    """Removes cgroup directory `top` and its children, deepest first, if no
    process is left in them; True if it is gone."""
    for d, _, _ in sorted(os.walk(top), key=lambda w: -w[0].count("/")):
        try:
            os.rmdir(d)
        except OSError:
            return False
    return True


def all_cgroup_roots(top="/sys/fs/cgroup"):
    """Where a bench's cgroups can be: the root (v2) and every hierarchy
    mounted under it (v1: memory, cpu, cpuacct, freezer, the unified one...)."""
    return [top] + sorted(os.path.join(top, h) for h in os.listdir(top) if os.path.isdir(os.path.join(top, h)))


def recover(memext_bin, say=print, root=WORK_ROOT, cgroup_roots=None):
    """Undoes what dead bench runs left under `root`, saying what it does.
    Returns the work directories it could not clear (left in place, named in
    the message)."""
    stuck = []
    cg_roots = all_cgroup_roots() if cgroup_roots is None else cgroup_roots
    for entry, bench, pid in work_dirs(sorted(os.listdir(root))):
        work = os.path.join(root, entry)
        if not os.path.isdir(work) or _alive(pid):
            continue
        say(f"bench: run {pid} of bench/{bench} was killed before its clean-up; undoing what it left in {work}")
        configs = sorted(f for f in os.listdir(work) if f.endswith(".toml"))
        if configs and not os.path.exists(memext_bin):
            say(f"  no {memext_bin}: the dead run's knobs and tiers are not restored ({', '.join(configs)})")
            configs = []
        for cfg in configs:
            path = os.path.join(work, cfg)
            for action in (["restore"], ["tiers", "down"]):
                r = _memext(memext_bin, path, *action)
                for line in (r.stdout if r.returncode == 0 else r.stderr).splitlines():
                    say(f"  memext {' '.join(action)}: {line}")
        left = swap_files_under(_read("/proc/swaps"), work)
        for swap in left:
            r = subprocess.run(["swapoff", swap], capture_output=True, text=True)
            say(f"  swapoff {swap}: {'done' if r.returncode == 0 else r.stderr.strip()}")
        if swap_files_under(_read("/proc/swaps"), work):
            say(f"  {work} kept: a swap area in it is still active")
            stuck.append(work)
            continue
        subprocess.run(["rm", "-rf", work], check=True)
        if not any(b == bench and _alive(p) for _, b, p in work_dirs(os.listdir(root))):
            for cg_root in cg_roots:
                for top in (f"{cg_root}/memext-bench-{bench}", f"{cg_root}/{entry}"):
                    if os.path.isdir(top) and not _empty_cgroup_tree(top):
                        say(f"  {top} kept: processes are still in it")
    return stuck


def main():
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] + " Needs root.")
    ap.add_argument("--memext", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                                     "target", "debug", "memext"),
                    help="the memext binary whose restore and tiers down undo a dead run's knobs and tiers "
                         "(default: target/debug/memext)")
    a = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("bench/leftovers.py needs root (swapoff, cgroups)")
    stuck = recover(a.memext)
    if stuck:
        raise SystemExit(f"bench: could not clear {', '.join(stuck)}")


if __name__ == "__main__":
    main()
