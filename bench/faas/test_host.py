"""host.py: the fleet's removal goes on when dockerd stops answering."""
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import host  # noqa: E402


class HungEngine:
    """An engine whose docker CLI never returns (dockerd deadlocked) until
    it is restarted."""
    IMAGE = "image"

    def __init__(self, hangs=("rm", "run")):
        self.calls, self.restarts, self.hangs = [], 0, hangs

    def docker(self, *args, check=True, timeout=None):
        self.calls.append((args[0], len(args) - 2, timeout))
        if args[0] in self.hangs:
            raise subprocess.TimeoutExpired(["docker", *args], timeout)
        return ""

    def restart(self):
        self.restarts += 1


class Fleet(unittest.TestCase):
    def test_a_removal_that_does_not_return_restarts_the_engine(self):
        with tempfile.TemporaryDirectory() as work:
            engine = HungEngine()
            fleet = host.Fleet(engine, work, [f"fn{k:04d}" for k in range(120)], [32] * 120)
            os.makedirs(fleet.dir)
            fleet.remove()
            self.assertEqual(engine.calls, [("rm", 50, host.REMOVE_WITHIN)], "the first batch, bounded; then left")
            self.assertEqual(engine.restarts, 1, "the engine restarted: nothing of the fleet left running")
            self.assertFalse(os.path.exists(fleet.dir))

    def test_every_docker_call_of_a_start_is_bounded(self):
        with tempfile.TemporaryDirectory() as work:
            for hangs in ("rm", "run"):
                engine = HungEngine(hangs=(hangs,))
                fleet = host.Fleet(engine, work, ["fn0000"], [32], parallel=1)
                with self.assertRaises(subprocess.TimeoutExpired):
                    fleet.start(Cleanup())
                self.assertEqual(engine.calls[-1][0], hangs)
                self.assertTrue(all(t is not None for _, _, t in engine.calls), engine.calls)


class SilentFunctions(unittest.TestCase):
    def test_a_function_that_never_comes_up_fails_its_mode_by_name(self):
        with tempfile.TemporaryDirectory() as work:
            fleet = host.Fleet(RecordingEngine(), work, ["fn0000", "fn0001"], [32, 32], parallel=1)
            with self.assertRaises(RuntimeError) as caught:
                fleet.start(Cleanup(), within=0.3)
            self.assertIn("fn0000 did not come up", str(caught.exception))


class RecordingEngine:
    """An engine that records each `docker run`."""
    IMAGE = "image"

    def __init__(self):
        self.runs = []

    def docker(self, *args, check=True, timeout=None):
        if args[0] == "run":
            self.runs.append(args)
        return ""


class StaticLimits(unittest.TestCase):
    def test_the_cap_is_split_in_proportion_to_each_functions_memory(self):
        cap = 1000 * host.MIB
        got = host.static_limits([42, 92, 66], cap)
        self.assertLessEqual(sum(got), cap)
        self.assertTrue(all(x % 4096 == 0 for x in got))
        for share, mib in zip(got, [42, 92, 66]):
            self.assertAlmostEqual(share / cap, mib / 200, delta=1e-4)
        with self.assertRaises(ValueError):
            host.static_limits([], cap)

    def test_each_function_is_created_with_its_own_limit(self):
        with tempfile.TemporaryDirectory() as work:
            engine = RecordingEngine()
            fleet = host.Fleet(engine, work, ["fn0000", "fn0001"], [30, 80], parallel=1)
            ready, host.invoke.wait_ready = host.invoke.wait_ready, lambda *a, **k: None
            try:
                fleet.start(Cleanup(), limits=[11 << 20, 23 << 20])
                limited, engine.runs = engine.runs, []
                fleet.start(Cleanup())
            finally:
                host.invoke.wait_ready = ready
            limit = {r[r.index("--name") + 1]: r[r.index("--memory") + 1] for r in limited}
            self.assertEqual(limit, {"fn0000": str(11 << 20), "fn0001": str(23 << 20)})
            self.assertTrue(all(r[r.index("--memory-swap") + 1] == "-1" for r in limited))
            self.assertEqual(len(engine.runs), 2)
            self.assertTrue(all("--memory" not in r for r in engine.runs), "no limit unless asked")


class DeadEngine:
    """An engine whose fn0001 exited on SIGKILL and fn0002 on a Python
    traceback; `inspect` answers in INSPECT_STATE's format."""
    IMAGE = "image"

    def __init__(self):
        self.calls = []

    def docker(self, *args, check=True, timeout=None, stderr=False):
        self.calls.append((args, stderr))
        if args[0] == "inspect":
            return ('/fn0000 true 0 false 0001-01-01T00:00:00Z ""\n'
                    '/fn0001 false 137 true 2026-12-01T21:00:05.1Z ""\n'
                    '/fn0002 false 1 false 2026-12-01T21:00:06.2Z "no such \\"x\\""')
        if args[0] == "logs":
            return {"fn0001": "", "fn0002": "Traceback ...\nMemoryError"}[args[-1]]
        return ""


class Deaths(unittest.TestCase):
    def test_each_dead_function_is_listed_with_how_it_ended(self):
        with tempfile.TemporaryDirectory() as work:
            engine = DeadEngine()
            dead = host.Fleet(engine, work, ["fn0000", "fn0001", "fn0002"], [32] * 3).deaths()
        self.assertEqual([d["name"] for d in dead], ["fn0001", "fn0002"], "the running one is not")
        self.assertEqual((dead[0]["exit_code"], dead[0]["oom_killed"]), (137, True))
        self.assertEqual((dead[1]["exit_code"], dead[1]["oom_killed"], dead[1]["error"]), (1, False, 'no such "x"'))
        self.assertEqual(dead[1]["log"], "Traceback ...\nMemoryError")
        self.assertTrue(all(stderr for args, stderr in engine.calls if args[0] == "logs"), "its stderr read too")
        self.assertTrue(all(a[0] != "logs" or a[-1] != "fn0000" for a, _ in engine.calls))

    def test_a_container_the_engine_no_longer_knows_is_skipped(self):
        self.assertEqual(host.parse_states("\n/fn0003 false 0\n"), [])


class TakenNameEngine(RecordingEngine):
    """An engine where fn0000's name is still taken at its first `run`
    (a container its `rm -f` did not remove), as dockerd answers."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def docker(self, *args, check=True, timeout=None):
        self.calls.append(args[:2])
        if args[0] == "run" and len(self.runs) == 0:
            self.runs.append(args)
            raise RuntimeError('docker run -d --name: docker: Error response from daemon: Conflict. The container '
                               'name "/fn0000" is already in use by container "5fccaa4c6c66".')
        return super().docker(*args, check=check, timeout=timeout)


class TakenNames(unittest.TestCase):
    def test_a_name_still_taken_is_removed_and_the_function_created_again(self):
        with tempfile.TemporaryDirectory() as work:
            engine = TakenNameEngine()
            fleet = host.Fleet(engine, work, ["fn0000"], [32], parallel=1)
            ready, host.invoke.wait_ready = host.invoke.wait_ready, lambda *a, **k: None
            try:
                fleet.start(Cleanup())
            finally:
                host.invoke.wait_ready = ready
            self.assertEqual(engine.calls, [("rm", "-f"), ("run", "-d"), ("rm", "-f"), ("run", "-d")])
            self.assertEqual(len(engine.runs), 2)

    def test_any_other_failure_of_a_run_fails_the_start(self):
        class Refusing(RecordingEngine):
            def docker(self, *args, check=True, timeout=None):
                if args[0] == "run":
                    raise RuntimeError("docker run -d --name: no such image")
                return ""

        with tempfile.TemporaryDirectory() as work:
            fleet = host.Fleet(Refusing(), work, ["fn0000"], [32], parallel=1)
            with self.assertRaises(RuntimeError):
                fleet.start(Cleanup())


class Cleanup:
    def push(self, what, fn):
        pass


if __name__ == "__main__":
    unittest.main()
