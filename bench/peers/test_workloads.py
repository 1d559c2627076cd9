"""Unit tests of bench/peers/workloads.py's pure parts. Run: python3 -m unittest
discover -s bench/peers"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads  # noqa: E402


class Timeline(unittest.TestCase):
    def test_transactions_binned_by_completion_with_their_slow_counts(self):
        done = [100.01, 100.05, 100.09, 100.15, 100.42]
        lat = [0.3, 0.8, 12.0, 1.6, 0.6]
        rows = workloads.timeline_rows(done, lat)
        self.assertEqual([round(r[0], 1) for r in rows], [100.0, 100.1, 100.4])
        over = {o: i + 2 for i, o in enumerate(workloads.TIMELINE_OVER_MS)}
        first = rows[0]
        self.assertEqual(first[1], 3)
        self.assertEqual(first[over[0.5]], 2)
        self.assertEqual(first[over[1.0]], 1)
        self.assertEqual(first[over[10.0]], 1)
        self.assertEqual(first[-1], 12.0)
        self.assertEqual(rows[1][over[1.5]], 1)
        self.assertEqual(rows[1][over[2.0]], 0)
        self.assertEqual((rows[2][1], rows[2][over[0.5]], rows[2][over[0.75]]), (1, 1, 0))

    def test_no_transactions_no_rows(self):
        self.assertEqual(workloads.timeline_rows([], []), [])


if __name__ == "__main__":
    unittest.main()
