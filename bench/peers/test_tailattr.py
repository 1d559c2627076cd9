"""Unit tests of bench/peers/tailattr.py. Run: python3 -m unittest discover -s bench/peers"""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tailattr  # noqa: E402

TIMELINE = ["t,tx,over_0.5ms,over_1.0ms,max_ms\n",
            "100.0,100,10,5,3.0\n", "100.1,100,2,0,0.9\n", "100.2,100,20,15,9.0\n", "100.3,100,1,0,0.6\n"]


class TailAttribution(unittest.TestCase):
    def test_the_slow_column_is_the_one_asked_for(self):
        tl = tailattr.read_timeline(TIMELINE, "1.0")
        self.assertEqual(tl, {1000: (100, 5), 1001: (100, 0), 1002: (100, 15), 1003: (100, 0)})
        self.assertEqual(tailattr.read_timeline(TIMELINE, "0.5")[1002], (100, 20))

    def test_a_touch_runs_from_its_end_less_its_latency(self):
        lines = ['pc-noise-00 {"t": 100.25, "op": "wake", "lat": 0.1}\n',
                 'pc-noise-00 {"t": 90.0, "op": "ready", "heap": 1}\n', "junk\n"]
        self.assertEqual(tailattr.noise_touches(lines), [(100.15, 100.25)])

    def test_daemon_writes_and_read_backs_end_at_their_timestamp(self):
        lines = [json.dumps({"timestamp": "1970-01-01T00:01:40.300000Z", "event": "slow-write", "ms": 200.0}),
                 json.dumps({"timestamp": "1970-01-01T00:01:40.050000Z", "event": "read-back", "seconds": 0.05}),
                 json.dumps({"timestamp": "1970-01-01T00:01:40.050000Z", "event": "woke"}), "not json"]
        iv = tailattr.daemon_intervals(lines)
        self.assertEqual([(round(a, 3), round(b, 3)) for a, b in iv["write"]], [(100.1, 100.3)])
        self.assertEqual([(round(a, 3), round(b, 3)) for a, b in iv["readback"]], [(100.0, 100.05)])

    def test_samples_give_page_outs_swap_ins_and_the_cap(self):
        mib = 1 << 20
        lines = ["# map abc pc-noise-00\n",
                 f"100.0 parent 1 2 5 0 0\n", f"100.0 abc 1 2 0 0 {10 * mib}\n",
                 f"100.1 parent 1 2 6 0 0\n", f"100.1 abc 1 2 0 0 {20 * mib}\n",
                 f"100.2 parent 1 2 6 0 0\n", f"100.2 abc 1 2 0 0 {5 * mib}\n",
                 f"100.3 abc 1 2 0 0 {5 * mib + 4096}\n"]
        iv = tailattr.sample_intervals(lines)
        self.assertEqual(iv["cap"], [(100.0, 100.1)])
        self.assertEqual(iv["pageout"], [(100.0, 100.1)])
        self.assertEqual(iv["swapin"], [(100.1, 100.2)])

    def test_the_tail_is_split_by_what_overlapped_each_bin(self):
        tl = tailattr.read_timeline(TIMELINE, "1.0")
        labels = tailattr.label_bins(tl, {"touch": [(100.15, 100.25)], "write": [(100.02, 100.04)]})
        self.assertEqual(labels[1000], frozenset({"write"}))
        self.assertEqual(labels[1001], frozenset({"touch"}))
        self.assertEqual(labels[1002], frozenset({"touch"}))
        self.assertEqual(labels[1003], frozenset())
        rows = tailattr.split_tail(tl, labels)
        self.assertEqual(rows[0], (frozenset({"touch"}), 2, 200, 15))
        by = tailattr.by_activity(tl, labels)
        self.assertEqual(by["touch"], [2, 200, 15])
        self.assertEqual(by["write"], [1, 100, 5])
        self.assertEqual(by["none"], [1, 100, 0])
        self.assertIn("20 over 1.0 ms (5.00%)", tailattr.report(tl, labels, "1.0"))


if __name__ == "__main__":
    unittest.main()
