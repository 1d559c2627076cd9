"""timeline.py: the daemon's events read against a function's calls."""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import timeline  # noqa: E402

START = 1_795_000_000.0  # the trace's start, epoch seconds


def line(at, event, ctx="/memext-faas/a", **fields):
    ts = timeline.datetime.datetime.fromtimestamp(START + at, timeline.datetime.timezone.utc)
    return json.dumps({"timestamp": ts.isoformat().replace("+00:00", "Z"), "event": event,
                       "context": ctx, **fields})


class Timeline(unittest.TestCase):
    def test_events_are_read_on_the_traces_clock_for_the_functions_only(self):
        lines = [
            "memext daemon: not json",
            line(1.5, "pushing-out", keep_bytes=4 << 20),
            line(2.0, "bringing-back", reason="periodic"),
            line(2.2, "read-back", bytes=76 << 20, seconds=0.15),
            line(2.3, "woke", ctx="/memext-faas/other", via="poll"),
            line(2.4, "slow-write", ms=12),
            line(2.5, "reclaimed", to=67 << 20, ms=0.01),
            line(2.6, "reclaimed", to=4 << 20, ms=66.0),
        ]
        ev = timeline.daemon_events(lines, {"/memext-faas/a"}, START)
        self.assertEqual([(round(t, 2), e, d) for t, e, d in ev["/memext-faas/a"]], [
            (1.5, "pushing-out", "keeping 4 MiB"),
            (2.0, "bringing-back", "periodic"),
            (2.2, "read-back", "76 MiB in 150 ms"),
            (2.6, "reclaimed", "to 4 MiB in 66 ms"),
        ])
        self.assertNotIn("/memext-faas/other", ev)

    def test_each_call_is_labelled_by_what_the_daemon_did_since_the_previous_one(self):
        calls = [{"t": 10.0}, {"t": 30.0}, {"t": 50.0}, {"t": 70.0}]
        events = [(5.0, "pushing-out", ""), (27.0, "bringing-back", "periodic"),
                  (40.0, "pushing-out", ""), (60.0, "settled", "tick")]
        labels = [timeline.label(gap) for _, gap in timeline.calls_with_gaps(calls, events)]
        self.assertEqual(labels, ["out", "back:periodic", "out", "kept"])
        # A push-out after the bring-back leaves it out.
        self.assertEqual(timeline.label([(1, "bringing-back", "woke"), (2, "pushing-out", "")]), "out")
        # Its limit lowered into what it held, with no push-out: squeezed;
        # after a push-out, the limit follows it down: still out.
        self.assertEqual(timeline.label([(1, "bringing-back", "woke"), (2, "reclaimed", "")]), "squeezed")
        self.assertEqual(timeline.label([(1, "pushing-out", ""), (2, "reclaimed", "")]), "out")

    def test_summary_counts_calls_with_their_median_and_worst(self):
        s = timeline.summarize([("out", 100.0), ("out", 300.0), ("out", 200.0), ("kept", 2.0)])
        self.assertEqual(s, {"kept": (1, 2.0, 2.0), "out": (3, 200.0, 300.0)})


if __name__ == "__main__":
    unittest.main()
