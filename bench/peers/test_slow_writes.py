"""slow_writes.py's tally of a daemon log. Run: python3 -m unittest discover -s bench/peers"""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import slow_writes  # noqa: E402


def line(**kw):
    return json.dumps(kw)


class Tally(unittest.TestCase):
    def test_loop_writes_by_state_and_the_reclaimers_lowerings_per_run(self):
        log = [
            line(message="memext daemon: cgroup v1, capacity 512 MiB"),
            line(event="pushing-out", context="/a"),
            line(event="slow-write", context="/a", value="16777216", ms=120.0),
            line(event="reclaimed", context="/b", ms=300.0, stopped=False),
            "not json",
            line(message="memext daemon: cgroup v1, capacity 512 MiB"),
            line(event="reclaimed", context="/a", ms=40.0, stopped=True),
            line(event="slow-write", context="/c", value="1", ms=15.0),
        ]
        first, second = slow_writes.tally(log)
        self.assertEqual(dict(first["ms"]), {"pushing-out": 120.0})
        self.assertEqual(first["background"], {"n": 1, "ms": 300.0, "stopped": 0})
        self.assertEqual(dict(second["count"]), {"-": 1})
        self.assertEqual(second["background"], {"n": 1, "ms": 40.0, "stopped": 1})


if __name__ == "__main__":
    unittest.main()
