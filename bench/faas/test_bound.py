"""bench/faas's bounds: the offline bound is above the online policies,
memext's keep order keeps a frequent function that LRU loses to one-off
calls, a periodic function is loaded before its calls from the third on.
Run: python3 -m unittest discover -s bench/faas."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bound  # noqa: E402
import trace as faas_trace  # noqa: E402


def frequent_among_one_offs():
    """fn 0 called every 10 s; between two of its calls, two functions
    never called again (1..): room for two functions of the three."""
    calls, nxt = [], 1
    for k in range(6):
        calls.append((10.0 * k, 0))
        calls.extend([(10.0 * k + 3, nxt), (10.0 * k + 6, nxt + 1)])
        nxt += 2
    return calls, [10] * nxt, ["poisson"] * nxt


class BoundTest(unittest.TestCase):
    def test_memext_keeps_the_frequent_function_lru_loses(self):
        calls, sizes, classes = frequent_among_one_offs()
        lru = bound.simulate(calls, sizes, classes, 20, "lru")
        memext = bound.simulate(calls, sizes, classes, 20, "memext")
        self.assertEqual(lru.get("all", 0), 0, "two one-offs push it out every time")
        # Its second call finds it (its rate then beats a one-off's); so
        # does every later one.
        self.assertEqual(memext.get("all", 0), 5)

    def test_a_replay_until_a_time_reports_what_is_resident_then(self):
        calls, sizes, classes = frequent_among_one_offs()
        state = {}
        bound.simulate(calls, sizes, classes, 20, "memext", until=13.5, state=state)
        # Calls before 13.5: the frequent one (function 0) at 0 and 10, the
        # one-offs 1 and 2 at 3 and 6, 3 at 13; room for two.
        self.assertEqual(state["history"][0], [0.0, 10.0])
        self.assertNotIn(4, state["history"], "its call at 16 is not replayed")
        self.assertEqual(len(state["resident"]), 2)
        self.assertIn(3, state["resident"], "just called")

    def test_calls_within_the_merge_window_are_left_out_of_the_history(self):
        calls = [(0.0, 0), (1.0, 0), (2.5, 0), (10.0, 0), (11.0, 1)]
        # Or a callable (previous call, this one) says which merge.
        close = lambda prev, t: t - prev < 1.2  # noqa: E731
        for merge, want in ((0.0, [0.0, 1.0, 2.5, 10.0]), (2.0, [0.0, 10.0]), (close, [0.0, 2.5, 10.0])):
            state = {}
            bound.simulate(calls, [10, 10], ["poisson"] * 2, 30, "memext", state=state, merge=merge)
            self.assertEqual(state["history"][0], want, f"merge {merge}")

    def test_calls_taken_where_none_came_are_in_the_history_only(self):
        calls, sizes, classes = frequent_among_one_offs()
        # One-off 1 (called at 3) taken for called at 4, 5 and 9 as well: it
        # looks frequent and stays in place of function 0 at its call at 10.
        extra = [(4.0, 1), (5.0, 1), (9.0, 1)]
        state = {}
        memext = bound.simulate(calls, sizes, classes, 20, "memext", extra=extra, until=10.5, state=state)
        self.assertEqual(state["history"][1], [3.0, 4.0, 5.0, 9.0])
        self.assertEqual(memext.get("all", 0), 0, "function 0's call at 10 is cold")
        self.assertEqual(bound.simulate(calls, sizes, classes, 20, "memext", until=10.5).get("all", 0), 1)

    def test_a_periodic_function_is_loaded_before_its_third_call(self):
        calls, sizes, classes = frequent_among_one_offs()
        # Room for one function only: the frequent one is always evicted by
        # the next one-off, unless loaded ahead of its call.
        memext = bound.simulate(calls, sizes, classes, 10, "memext", lead=1.0)
        self.assertEqual(memext.get("all", 0), 4, "calls 3 to 6 (one interval makes a period)")
        self.assertEqual(bound.simulate(calls, sizes, classes, 10, "lru").get("all", 0), 0)

    def test_the_offline_bound_is_above_the_online_policies(self):
        p = faas_trace.Params(functions=40, seconds=600.0, seed=3)
        out, totals = bound.bounds(p, [30 + (7 * i) % 50 for i in range(40)], 600.0)
        self.assertGreater(totals["all"], 100)
        for policy in ("lru", "memext"):
            self.assertLessEqual(out[policy].get("poisson", 0) + out[policy].get("bursty", 0),
                                 out["belady"].get("poisson", 0) + out["belady"].get("bursty", 0),
                                 policy)
        self.assertGreater(out["memext"]["all"], out["lru"]["all"])

    def test_the_expected_wake_follows_history_rs(self):
        self.assertEqual(bound.expected_wake_in([10.0, 40.0, 70.0], 90.0), 10.0, "due in 10 s")
        self.assertEqual(bound.expected_wake_in([10.0, 40.0, 70.0], 120.0), 25.0, "overdue: half the time since")
        self.assertEqual(bound.expected_wake_in([0.0, 10.0, 25.0], 27.0), 27.0 / 12, "the rate, ten calls added")
        self.assertEqual(bound.expected_wake_in([99.0], 100.0), 100.0, "once in 100 s")
        timer = [0.0, 10.0, 20.0, 30.0]
        self.assertEqual(bound.expected_wake_in(timer, 48.0), 2.0, "its call at 40 s unseen: the one at 50 s")
        self.assertEqual(bound.expected_wake_in(timer, 68.0), 19.0, "three unseen: half the time since")

    def test_cold_calls_queue_for_the_transfer_and_warm_ones_take_no_time(self):
        # Two functions of 100 MiB at 1000 MiB/s: each cold call 100 ms.
        calls = [(0.0, 0), (0.05, 1), (1.0, 0), (2.0, 1)]
        lat = bound.transfer_latencies(calls, [100, 100], [False, False, True, False], 1000.0)
        self.assertAlmostEqual(lat[0], 0.1)
        self.assertAlmostEqual(lat[1], 0.15, msg="waits for the first transfer, 50 ms")
        self.assertEqual(lat[2], 0.0)
        self.assertAlmostEqual(lat[3], 0.1, msg="the channel is free again")
        two = bound.transfer_latencies(calls, [100, 100], [False, False, True, False], 1000.0, channels=2)
        self.assertAlmostEqual(two[1], 0.1, msg="a second transfer at once")
        with self.assertRaises(ValueError):
            bound.transfer_latencies(calls, [100, 100], [True] * 4, 0.0)

    def test_the_latency_bound_counts_the_calls_over_the_p99_target(self):
        p = faas_trace.Params(functions=40, seconds=600.0, seed=3)
        heaps = [30 + (7 * i) % 50 for i in range(40)]
        fast, limit = bound.latency_bounds(p, heaps, 600.0, 1e6)
        self.assertEqual({r["over"] for r in fast.values()}, {0}, "transfers all but free")
        slow, slow_limit = bound.latency_bounds(p, heaps, 600.0, 100.0)
        self.assertAlmostEqual(slow_limit, limit * 1e4)
        self.assertGreater(slow["lru"]["over"], 0, "at 100 MiB/s a cold call takes 0.3-0.8 s: the next ones queue")
        self.assertLessEqual(slow["belady"]["p50_ms"], slow["lru"]["p50_ms"])

    def test_an_unknown_policy_is_refused(self):
        with self.assertRaises(ValueError):
            bound.simulate([(0.0, 0)], [10], ["timer"], 10, "fifo")


if __name__ == "__main__":
    unittest.main()
