"""bench/faas's trace generator: the shape it promises (class shares, timers
periodic, Poisson ~CV 1, bursts CV > 1, most functions rare), reproducible
from its parameters, bad parameters refused. Run:
python3 -m unittest discover -s bench/faas."""
import dataclasses
import os
import statistics
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import trace as faas_trace  # noqa: E402


def calls_of(trace, cls):
    """Each function of class `cls`: its sorted call times."""
    per_fn = {i: [] for i, f in enumerate(trace.functions) if f.cls == cls}
    for t, i in trace.calls:
        if i in per_fn:
            per_fn[i].append(t)
    return per_fn


class TraceTest(unittest.TestCase):
    def setUp(self):
        # An hour, so that every class shows its inter-arrival shape.
        self.p = faas_trace.Params(functions=200, seconds=3600.0, seed=7)
        self.trace = faas_trace.generate(self.p)

    def test_the_same_parameters_give_the_same_trace(self):
        again = faas_trace.generate(self.p)
        self.assertEqual(again.calls, self.trace.calls)
        other = faas_trace.generate(dataclasses.replace(self.p, seed=8))
        self.assertNotEqual(other.calls, self.trace.calls)

    def test_class_shares_and_calls_inside_the_trace(self):
        counts = {c: sum(1 for f in self.trace.functions if f.cls == c) for c in faas_trace.CLASSES}
        self.assertEqual(counts, {"timer": 60, "poisson": 100, "bursty": 40})
        times = [t for t, _ in self.trace.calls]
        self.assertEqual(times, sorted(times))
        self.assertTrue(all(0 <= t < self.p.seconds for t in times))

    def test_timers_are_periodic_at_their_period(self):
        for i, times in calls_of(self.trace, "timer").items():
            period = self.trace.functions[i].mean_gap
            gaps = [b - a for a, b in zip(times, times[1:])]
            self.assertTrue(all(abs(g - period) <= self.p.timer_jitter for g in gaps), (period, gaps))
            self.assertLess(times[0], period + self.p.timer_jitter)

    def test_poisson_is_memoryless_and_bursts_are_bursty(self):
        def pooled_cv(cls):
            # Gaps scaled by each function's own mean: one CV for the class.
            norm = []
            for times in calls_of(self.trace, cls).values():
                gaps = [b - a for a, b in zip(times, times[1:])]
                if len(gaps) >= 2:
                    m = statistics.mean(gaps)
                    norm.extend(g / m for g in gaps)
            return statistics.pstdev(norm)
        self.assertAlmostEqual(pooled_cv("poisson"), 1.0, delta=0.15)
        self.assertGreater(pooled_cv("bursty"), 1.5)

    def test_most_functions_are_rare(self):
        # Log-uniform rates: half the Poisson functions' mean gaps are above
        # the range's geometric mean (a uniform draw would put 84% there),
        # and the median one is called well under once a minute.
        gaps = [f.mean_gap for f in self.trace.functions if f.cls == "poisson"]
        middle = (self.p.poisson_min * self.p.poisson_max) ** 0.5
        self.assertAlmostEqual(sum(g > middle for g in gaps) / len(gaps), 0.5, delta=0.15)
        counts = [len(t) for t in calls_of(self.trace, "poisson").values()]
        self.assertLess(statistics.median(counts), 60)

    def test_a_change_to_one_class_leaves_the_others_calls(self):
        other = faas_trace.generate(dataclasses.replace(self.p, burst_size=8.0))
        def non_bursty(tr):
            return [(t, i) for t, i in tr.calls if tr.functions[i].cls != "bursty"]
        self.assertEqual(non_bursty(other), non_bursty(self.trace))

    def test_bad_parameters_are_refused_by_name(self):
        for bad, word in ((dict(functions=0), "functions"), (dict(seconds=0), "seconds"),
                          (dict(timer_share=0.5), "shares"), (dict(poisson_min=0), "poisson"),
                          (dict(timer_min=200.0), "timer")):
            with self.assertRaisesRegex(ValueError, word):
                faas_trace.generate(dataclasses.replace(self.p, **bad))

    def test_json_round_trip_keeps_parameters_and_calls(self):
        j = self.trace.to_json()
        self.assertEqual(faas_trace.Params(**j["parameters"]), self.p)
        self.assertEqual(len(j["calls"]), len(self.trace.calls))
        self.assertEqual(j["functions"][0]["name"], "fn0000")


if __name__ == "__main__":
    unittest.main()
