"""Tests of the first run's report (pure functions)."""
import unittest

import report

MIB = 1 << 20


class ReportTest(unittest.TestCase):
    def test_dram_table_has_a_row_per_container_and_the_totals(self):
        snaps = [("no cap", {"a": (100 * MIB, 0), "b": (50 * MIB, 0)}),
                 ("memext", {"a": (100 * MIB, 0), "b": (16 * MIB, 34 * MIB)})]
        t = report.dram_table(snaps, ["a", "b"], [0, 128 * MIB]).splitlines()
        self.assertIn("memext", t[0])
        self.assertTrue(t[3].startswith("b") and t[3].endswith("16 MiB (34 MiB out)"), t[3])
        self.assertTrue(t[4].startswith("total") and t[4].endswith("116 MiB"), t[4])
        self.assertTrue(t[5].endswith("128 MiB") and "none" in t[5], t[5])

    def test_wake_table_compares_with_the_first_mode(self):
        w = {"handler_ms": 1.0, "major_faults": 1000, "swapped_before": 64 * MIB}
        t = report.wake_table([("without", {**w, "latency_s": 0.8}), ("with", {**w, "latency_s": 0.2})])
        self.assertIn("4.0x faster", t.splitlines()[3])
        self.assertIn("1,000", t)

    def test_phases_split_points_by_their_start(self):
        marks = [(0.0, "no cap"), (10.0, "linux"), (20.0, "memext")]
        pts = [(1.0, 1), (9.9, 2), (10.0, 3), (25.0, 4)]
        self.assertEqual(report.split_by_phase(pts, marks), [("no cap", [1, 2]), ("linux", [3]), ("memext", [4])])
        self.assertIsNone(report.phase_of(-1.0, marks))

    def test_percentile_is_nearest_rank(self):
        v = list(range(1, 101))
        self.assertEqual(report.percentile(v, 0.5), 50)
        self.assertEqual(report.percentile(v, 0.99), 99)
        self.assertEqual(report.percentile([7], 0.99), 7)


if __name__ == "__main__":
    unittest.main()
