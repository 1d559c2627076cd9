"""wakes.py: the daemon's wakes and onsets read against the trace's calls."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wakes  # noqa: E402
from test_timeline import START, line  # noqa: E402


class Wakes(unittest.TestCase):
    def test_a_wake_without_a_call_is_counted_and_blamed_on_a_lowering_before_it(self):
        calls = {"fn0": [10.0, 40.0]}
        events = {"fn0": [
            (10.02, "woke", "poll"),       # its call
            (20.0, "reclaimed", ""),
            (21.0, "onset", "tick"),       # no call: 1 s after memext took memory
            (30.0, "onset", "poll"),       # no call, nothing taken before it
            (40.9, "onset", "event"),      # its call, seen late
            (177.0, "woke", "poll"),       # the functions being stopped
        ]}
        no_call = wakes.tally(calls, events, trace_end=180.0)
        self.assertEqual(no_call, {"after memext took memory": 1, "other": 1})

    def test_no_call_readings_by_whether_a_call_was_near(self):
        calls = {"fn0": [10.0, 40.0]}
        events = {"fn0": [
            (10.3, "no-call", "poll"),     # a call turned away
            (25.0, "no-call", "tick"),     # a burst told from a call
            (10.4, "warm-call", "poll"),   # not a no-call
            (177.0, "no-call", "poll"),    # the functions being stopped
        ]}
        got = wakes.touch_verdicts(calls, events, trace_end=180.0)
        self.assertEqual(got, {"a call near": 1, "no call near": 1})
        self.assertEqual(wakes.tally(calls, events, trace_end=180.0), {}, "no-call is no wake")

    def test_a_call_taken_for_going_idle_at_its_event(self):
        evs = [(50.01, "became-idle", "event"), (50.7, "woke", "tick")]
        self.assertTrue(wakes.idle_at_event(50.0, evs))
        self.assertFalse(wakes.idle_at_event(49.0, evs), "too long before")
        self.assertFalse(wakes.idle_at_event(50.0, [(50.01, "became-idle", "tick")]))
        self.assertAlmostEqual(wakes.seen_after(50.0, evs), 0.7)
        self.assertEqual(wakes.bucket(wakes.seen_after(50.0, evs)), "0.3-1 s")
        self.assertEqual(wakes.bucket(0.01), "< 30 ms")
        self.assertEqual(wakes.bucket(None), "not seen within 1 s")

    def test_how_a_calls_wake_was_seen(self):
        evs = [(49.0, "woke", "event"), (50.03, "warm-call", "tick"), (50.027, "onset", "poll"),
               (50.2, "woke", "event")]
        via, dt = wakes.seen_by(50.0, evs)
        self.assertEqual(via, "poll", "the first after the call; a warm call is no wake")
        self.assertAlmostEqual(dt, 0.027)
        self.assertIsNone(wakes.seen_by(40.0, evs), "none within 1 s")

    def test_calls_not_seen_and_the_cold_calls_after_them(self):
        rows = [
            {"function": "fn0", "class": "timer", "t": "10.0", "majflt": "0"},     # seen
            {"function": "fn0", "class": "timer", "t": "25.0", "majflt": "0"},     # not seen
            {"function": "fn0", "class": "timer", "t": "40.0", "majflt": "5000"},  # cold, after it
            {"function": "fn1", "class": "poisson", "t": "41.0", "majflt": "4000"},  # cold, seen late
        ]
        events = {"fn0": [(10.01, "woke", "poll"), (40.02, "onset", "event")],
                  "fn1": [(42.5, "woke", "tick")]}
        missed, cold_after = wakes.unseen(rows, events)
        self.assertEqual(missed, {("timer", "warm"): 1, ("poisson", "cold"): 1})
        self.assertEqual(cold_after, 1, "fn0's cold call at 40 s; fn1 has none after")

    def test_why_a_call_after_a_quiet_gap_went_unseen(self):
        rows = [
            {"function": "fn0", "t": "10.0"},   # first call: seen
            {"function": "fn0", "t": "12.0"},   # within the gap: not asked
            {"function": "fn0", "t": "30.0"},   # under its allowance
            {"function": "fn1", "t": "20.0"},   # its pages out
            {"function": "fn2", "t": "20.0"},   # no resting reading
            {"function": "fn3", "t": "20.0"},   # rest not learned
        ]
        events = {"fn0": [(10.01, "woke", "event")]}
        rested = {
            "fn0": [(30.5, 2900, 5100, True), (35.0, 9000, 9500, True)],
            "fn1": [(20.4, 2500, 3000, False)],
            "fn3": [(20.4, 2500, None, True)],
        }
        why = wakes.unseen_after_gap(rows, events, rested)
        self.assertEqual(why["under its rest's allowance"], [[(2900, 5100)]], "the reading after 30 s only")
        self.assertEqual(len(why["pages not in"]), 1)
        self.assertEqual(len(why["no resting reading"]), 1)
        self.assertEqual(len(why["rest not learned yet"]), 1)
        self.assertEqual(sum(map(len, why.values())), 4, "the call 2 s after one is not asked")
        self.assertEqual(why["no resting reading"], [[]])

    def test_rested_readings_are_parsed(self):
        lines = [line(3.0, "rested", via="tick", cpu_us=2900, allowance_us=5100, resident=True),
                 line(4.0, "rested", via="poll", cpu_us=400, resident=False),
                 line(5.0, "woke", via="event")]
        got = wakes.parse_rested(lines, {"/memext-faas/a"}, START)
        self.assertEqual([(round(t, 2), c, a, r) for t, c, a, r in got["/memext-faas/a"]],
                         [(3.0, 2900, 5100, True), (4.0, 400, None, False)])

    def test_the_log_is_read_on_the_traces_clock_for_the_functions_only(self):
        lines = [line(3.0, "woke", via="event"), line(4.0, "read-back"),
                 line(5.0, "onset", ctx="/memext-faas/other", via="poll"), "not json"]
        ev = wakes.parse(lines, {"/memext-faas/a"}, START)
        self.assertEqual([(round(t, 2), e, v) for t, e, v in ev["/memext-faas/a"]], [(3.0, "woke", "event")])


if __name__ == "__main__":
    unittest.main()
