"""bench/faas: the serverless host's side: the function containers (one
bench/faas/function.py each, a real container of the private engine, its
socket in a bind-mounted directory) and the invoker that replays a trace
against them, open loop: every call is sent at its time in the trace,
whatever the calls before it took, and its latency counts from that time
(a call that waits for a busy function waits in its latency)."""
import concurrent.futures
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time

import invoke

HERE = os.path.dirname(os.path.abspath(__file__))
MIB = 1 << 20
# How long one `docker rm -f` of 50 containers may take (s): about 10 s when
# dockerd is well.
REMOVE_WITHIN = 60.0
# How long creating one function's container may take (s): 100 came up in
# 35-51 s four at a time in session 44's runs, 1.4-2 s each.
RUN_WITHIN = 120.0


def heap_sizes(functions, lo_mib, hi_mib, seed):
    """Each function's heap in MiB, uniform in [lo_mib, hi_mib], a pure
    function of the seed (saved with the results like the trace's)."""
    rng = random.Random(f"{seed}/heaps")
    return [rng.randint(lo_mib, hi_mib) for _ in range(functions)]


def static_limits(memory_mib, cap_bytes):
    """The `limits` peer's static limit of each function (bytes): the cap
    split in proportion to what each holds (`memory_mib`: heap and
    interpreter), as an operator sizes containers that together must fit
    the host; whole pages, their sum within the cap."""
    total = sum(memory_mib)
    if total <= 0 or cap_bytes <= 0:
        raise ValueError("the functions' memory and the cap must be positive")
    return [cap_bytes * m // total // 4096 * 4096 for m in memory_mib]


# One line per container: name, running, exit code, OOM-killed, when it
# ended, Docker's error (JSON-quoted: it may hold spaces or be empty).
INSPECT_STATE = ("{{.Name}} {{.State.Running}} {{.State.ExitCode}} {{.State.OOMKilled}} "
                 "{{.State.FinishedAt}} {{json .State.Error}}")


def parse_states(text):
    """`docker inspect -f INSPECT_STATE` output, one dict per container."""
    states = []
    for line in text.splitlines():
        parts = line.split(" ", 5)
        if len(parts) < 6:
            continue  # a container gone from the engine: inspect says so on stderr
        name, running, code, oom, finished, error = parts
        states.append({"name": name.lstrip("/"), "running": running == "true", "exit_code": int(code),
                       "oom_killed": oom == "true", "finished_at": finished, "error": json.loads(error)})
    return states


# What dockerd answers a `docker run --name` whose name a container holds.
NAME_TAKEN = "is already in use by container"

class Fleet:
    """The function containers of one mode: started in parallel (dockerd
    serialises much of it, a few at a time keep it busy), each waited for
    until it answers /health (its heap is allocated), removed by `cleanup`."""

    def __init__(self, engine, work, names, heaps_mib, parallel=4):
        self.engine, self.names, self.heaps = engine, names, heaps_mib
        self.dir = os.path.join(work, "sockets")
        self.parallel = parallel

    def socket(self, name):
        return os.path.join(self.dir, f"{name}.sock")

    def start(self, cleanup, docker_args=(), within=600.0, progress=None, limits=None):
        """Starts every function and waits until each answers; `limits`,
        one per function (bytes), gives each a memory limit from its
        creation on (swap unlimited), as `docker run --memory` does."""
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        os.chmod(self.dir, 0o777)
        cleanup.push("function containers", self.remove)
        done, lock = [0], threading.Lock()

        def one(k):
            name = self.names[k]
            self.engine.docker("rm", "-f", name, check=False, timeout=REMOVE_WITHIN)
            limit = () if limits is None else ("--memory", str(limits[k]), "--memory-swap", "-1")
            run = ("run", "-d", "--name", name, "--network", "none", *docker_args, *limit,
                   "-v", f"{self.dir}:/sock", "-v", f"{HERE}:/faas:ro", self.engine.IMAGE,
                   "python3", "/faas/function.py", "--socket", f"/sock/{name}.sock",
                   "--heap-mib", str(self.heaps[k]))
            try:
                self.engine.docker(*run, timeout=RUN_WITHIN)
            except RuntimeError as e:
                if NAME_TAKEN not in str(e):
                    raise
                # Its name still taken, by a container of the mode before
                # whose removal the engine's restart cut short (session 88:
                # static limits on the swap file after zswap's OOM kills;
                # the `rm -f` above did not take it): removed, checked,
                # and created once more.
                self.engine.docker("rm", "-f", name, timeout=REMOVE_WITHIN)
                self.engine.docker(*run, timeout=RUN_WITHIN)
            try:
                invoke.wait_ready(self.socket(name), within)
            except OSError as e:  # TimeoutError included
                # A mode whose function never comes up is a result of its
                # own (run.py goes on with the next mode): at a static
                # limit on zram one never answered (session 84).
                raise RuntimeError(f"{name} did not come up (answer /health, its heap allocated) "
                                   f"within {within:.0f} s: {e}") from e
            with lock:
                done[0] += 1
                if progress and (done[0] % 25 == 0 or done[0] == len(self.names)):
                    progress(done[0], len(self.names))

        with concurrent.futures.ThreadPoolExecutor(self.parallel) as pool:
            for f in [pool.submit(one, k) for k in range(len(self.names))]:
                f.result()

    def deaths(self, tail=20):
        """The functions whose container no longer runs, each with how it
        ended as Docker saw it (exit code: 128 + the signal that ended it;
        whether Docker marked it OOM-killed, which on cgroup v1 also follows
        an OOM *wait*, a task paused at its limit with kills off) and the
        last `tail` lines it wrote (a Python traceback, when it raised)."""
        out = self.engine.docker("inspect", "-f", INSPECT_STATE, *self.names, check=False, timeout=REMOVE_WITHIN)
        dead = [d for d in parse_states(out) if not d["running"]]
        for d in dead:
            d["log"] = self.engine.docker("logs", "--tail", str(tail), d["name"], check=False,
                                          timeout=REMOVE_WITHIN, stderr=True)
        return dead

    def ids(self):
        """The containers' full ids (their cgroups are PARENT/<id>)."""
        out = self.engine.docker("inspect", "-f", "{{.Id}}", *self.names)
        return out.split()

    def remove(self):
        """Removes the containers, 50 at a time, each batch given
        `REMOVE_WITHIN`: the private dockerd (20.10) can deadlock removing
        many at once (sessions 25 and 42: its processes gone, `docker rm`
        never returned). Then the engine is restarted at once (its stop
        kills it and ends what its containers left): the mode's tiers come
        down only once no process holds pages in them (session 43: `tiers
        down` failed under the living containers, and the next mode's
        first `docker rm` hung with no bound)."""
        for k in range(0, len(self.names), 50):
            try:
                self.engine.docker("rm", "-f", *self.names[k:k + 50], check=False, timeout=REMOVE_WITHIN)
            except subprocess.TimeoutExpired:
                print(f"bench/faas: docker rm of {len(self.names[k:k + 50])} containers did not return within "
                      f"{REMOVE_WITHIN:.0f} s (dockerd deadlocked); restarting the engine", file=sys.stderr)
                self.engine.restart()
                break
        shutil.rmtree(self.dir, ignore_errors=True)


INVOKER_NICE = -10


def replay(calls, sockets, t0, timeout=60.0, workers=64):
    """Sends call (t, i) to `sockets[i]` at `t0 + t`; returns one record per
    call: (i, t, latency s from t0 + t to the answer, the handler's own ms,
    error or None, the handler's major faults, its minor faults, then where
    the time before the handler went: s from t0 + t until the invoker sent
    the call, s from then until the handler began, the server's major and
    minor faults before the handler), the handler's CPU ms, its ms waiting
    for a CPU, its preemptions, and the server's ms waiting for a CPU before
    the handler. A function serves one call at a time:
    calls to a busy one queue in its socket's backlog, and that wait is in
    their latency."""
    records = [None] * len(calls)

    def one(k, t, i):
        due = t0 + t
        sent = time.time()
        a = invoke.Answer(None, None, None)
        try:
            status, body, _ = invoke.call(sockets[i], timeout=timeout)
            err = None if status == 200 else f"HTTP {status}"
            if status == 200:
                a = invoke.parse_answer(body)
        except (OSError, ValueError) as e:
            err = f"{type(e).__name__}: {e}"
        records[k] = (i, t, time.time() - due, a.ms, err, a.majflt, a.minflt, sent - due,
                      None if a.began is None else a.began - sent, a.pre_majflt, a.pre_minflt,
                      a.cpu_ms, a.wait_ms, a.preempted, a.pre_wait_ms)

    # The invoker stands for a platform's router, not part of the host under
    # test: its own scheduling delays are not the calls'. At its default
    # priority, on a host whose two CPUs the functions' swap-ins fill, it sent
    # a call 123 ms late (session 40). Its threads inherit this thread's.
    nice = os.getpriority(os.PRIO_PROCESS, 0)
    try:
        os.setpriority(os.PRIO_PROCESS, 0, INVOKER_NICE)
    except PermissionError:
        pass  # not root: at its own priority
    try:
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            for k, (t, i) in enumerate(calls):
                delay = t0 + t - time.time()
                if delay > 0:
                    time.sleep(delay)
                pool.submit(one, k, t, i)
    finally:
        os.setpriority(os.PRIO_PROCESS, 0, nice)
    return records
