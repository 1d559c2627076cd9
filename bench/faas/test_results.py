"""bench/faas's results: latency per class, the cold-call limit, the DRAM
left unused while calls waited, and the targets' verdicts. Run:
python3 -m unittest discover -s bench/faas."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results  # noqa: E402

MIB = 1 << 20
FUNCTIONS = [{"cls": "timer"}, {"cls": "poisson"}, {"cls": "bursty"}]


def rec(i, t, lat, err=None):
    return (i, t, lat, None if err else 1.0, err)


class Latency(unittest.TestCase):
    def test_classes_are_kept_apart_and_errors_left_out(self):
        records = [rec(0, 0, 0.010), rec(0, 1, 0.020), rec(1, 0, 2.0), rec(2, 0, 0.5), rec(2, 1, 9.0, "timeout")]
        out = results.latency(records, FUNCTIONS)
        self.assertEqual((out["calls"], out["errors"]), (5, 1))
        self.assertEqual(out["timer_p99_ms"], 20.0)
        self.assertEqual(out["poisson_p50_ms"], 2000.0)
        self.assertEqual(out["bursty_p99_ms"], 500.0)  # the failed call is not a latency
        self.assertEqual(out["p99_ms"], 2000.0)

    def test_a_timers_first_three_calls_are_not_predictable(self):
        funcs = FUNCTIONS + [{"cls": "timer"}]
        # Function 0: calls at 0..4 s, its 4th and 5th 7 and 9 ms; function 3:
        # three calls only; a poisson function's call is no timer's.
        records = [rec(0, t, lat) for t, lat in ((3, 0.007), (0, 0.5), (1, 0.4), (2, 0.3), (4, 0.009))]
        records += [rec(3, t, 0.2) for t in range(3)] + [rec(1, 9, 0.001)]
        out = results.latency(records, funcs)
        self.assertEqual(out["timer_predictable_calls"], 2)
        self.assertEqual(out["timer_predictable_p99_ms"], 9.0)
        self.assertEqual(out["timer_predictable_p50_ms"], 7.0)
        self.assertEqual(out["timer_p99_ms"], 500.0)

    def test_a_class_without_calls_has_no_figure(self):
        out = results.latency([rec(0, 0, 0.01)], FUNCTIONS)
        self.assertIsNone(out["bursty_p50_ms"])


class ColdLimit(unittest.TestCase):
    def test_heap_over_bandwidth_per_call(self):
        records = [rec(0, 0, 1), rec(1, 0, 1), rec(1, 1, 1)]
        out = results.cold_limit(records, [40, 80, 10], 400.0)
        self.assertEqual(out["cold_limit_p50_ms"], 200.0)
        self.assertEqual(out["cold_limit_p99_ms"], 200.0)
        self.assertEqual(results.cold_limit(records, [40, 80, 10], None)["cold_limit_p99_ms"], None)


class Dram(unittest.TestCase):
    def test_unused_counts_only_while_a_call_waits_on_memory(self):
        cap = 1000 * MIB
        series = [(0.0, 900 * MIB), (1.0, 600 * MIB), (2.0, 600 * MIB), (3.0, 1000 * MIB)]
        # a call from 0.5 s lasting 2 s (waiting from 0.55 to 2.5): samples at 1 and 2 s
        records = [rec(0, 0.5, 2.0), rec(1, 2.9, 0.01)]
        out = results.dram(series, records, cap)
        self.assertEqual(out["unused_while_waiting_mib"], 400.0)
        self.assertEqual(out["waiting_samples"], 2)
        self.assertEqual((out["dram_min_mib"], out["dram_max_mib"], out["dram_mean_mib"]), (600.0, 1000.0, 775.0))

    def test_fast_calls_are_not_waits(self):
        out = results.dram([(1.0, 0)], [rec(0, 0.99, 0.04)], 1000 * MIB)
        self.assertEqual(out["unused_while_waiting_mib"], 0.0)
        self.assertEqual(out["waiting_samples"], 0)


class Verdicts(unittest.TestCase):
    def row(self, mode, **kw):
        base = {"tier": "swapfile", "mode": mode, "round": 0, "p50_ms": 2.0, "p99_ms": 20.0, "timer_p99_ms": 20.0,
                "timer_predictable_p99_ms": 10.0, "timer_predictable_calls": 90, "cold_limit_p99_ms": 100.0, "unused_while_waiting_mib": 0.0, "cap_mib": 1000}
        return {**base, **kw}

    def test_met_and_missed(self):
        v = results.verdicts([self.row("ideal"), self.row("memext", p50_ms=5.0, p99_ms=140.0, timer_p99_ms=24.0,
                                                             timer_predictable_p99_ms=13.0,
                                                             unused_while_waiting_mib=60.0)])[("memext", "swapfile", 0)]
        self.assertFalse(v["p50 <= 2x ideal"][0])
        self.assertTrue(v["p99 <= 1.5x cold limit"][0])
        self.assertTrue(v["timer p99 <= 1.2x ideal"][0])
        self.assertFalse(v["timer p99 from each one's call 4 <= 1.2x ideal"][0])
        self.assertFalse(v["work-conserving"][0])

    def test_no_verdict_without_ideal(self):
        self.assertEqual(results.verdicts([self.row("memext")]), {})


if __name__ == "__main__":
    unittest.main()
