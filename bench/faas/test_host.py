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


class Cleanup:
    def push(self, what, fn):
        pass


if __name__ == "__main__":
    unittest.main()
