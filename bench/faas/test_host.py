"""host.py: the fleet's removal goes on when dockerd stops answering."""
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import host  # noqa: E402


class HungEngine:
    """An engine whose `docker rm` never returns (dockerd deadlocked)."""

    def __init__(self):
        self.calls = []

    def docker(self, *args, check=True, timeout=None):
        self.calls.append((args[0], len(args) - 2, timeout))
        raise subprocess.TimeoutExpired(["docker", *args], timeout)


class Fleet(unittest.TestCase):
    def test_a_removal_that_does_not_return_is_given_up_after_its_bound(self):
        with tempfile.TemporaryDirectory() as work:
            engine = HungEngine()
            fleet = host.Fleet(engine, work, [f"fn{k:04d}" for k in range(120)], [32] * 120)
            os.makedirs(fleet.dir)
            fleet.remove()
            self.assertEqual(engine.calls, [("rm", 50, host.REMOVE_WITHIN)], "the first batch, bounded; then left")
            self.assertFalse(os.path.exists(fleet.dir))


if __name__ == "__main__":
    unittest.main()
