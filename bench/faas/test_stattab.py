"""stattab.py: the daemon's planned targets against what functions held."""
import gzip
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stattab  # noqa: E402

MIB = 1 << 20


def ctx(state, target, resident, quiet=None, held=False, out=False, limit=None, usage=None):
    c = {"state": state, "target_bytes": target * MIB, "resident_bytes": resident * MIB, "held": held, "out": out,
         "limit_bytes": None if limit is None else limit * MIB}
    if usage is not None:
        c["usage_bytes"] = usage * MIB
    if quiet is not None:
        c["quiet"] = quiet
    return c


class StatTab(unittest.TestCase):
    def test_samples_are_read_plain_or_gzipped_and_a_cut_one_is_skipped(self):
        with tempfile.TemporaryDirectory() as d:
            text = "# 10.5\n" + json.dumps([ctx("idle", 4, 3)]) + "\n# 12.5\n[{\"state\"\n# 14.5\n[]\n"
            for name, opener in (("s.txt", open), ("s.txt.gz", gzip.open)):
                path = os.path.join(d, name)
                with opener(path, "wt") as f:
                    f.write(text)
                got = list(stattab.samples(path))
                self.assertEqual([t for t, _ in got], [10.5, 14.5], name)

    def test_active_contexts_split_into_busy_and_quiet_only_where_the_status_says(self):
        self.assertEqual(stattab.kind(ctx("active", 40, 40, quiet=True)), "quiet")
        self.assertEqual(stattab.kind(ctx("active", 40, 40, quiet=False, held=True)), "busy/held")
        self.assertEqual(stattab.kind(ctx("active", 40, 40)), "active", "an older status")
        self.assertEqual(stattab.kind(ctx("idle", 4, 1, out=True)), "idle/out")

    def test_room_planned_but_not_charged_counts_only_targets_above_the_usage(self):
        rows = [stattab.by_kind([ctx("active", 100, 60, quiet=False, limit=100, usage=64), ctx("idle", 4, 10)]),
                stattab.by_kind([ctx("active", 80, 60, quiet=False, limit=80, usage=64)])]
        table = stattab.summary(rows)
        self.assertIn("| busy | 1.0 | 90 | 60 | 64 | 90 | 26 |", table)
        self.assertIn("| idle | 0.5 | 2 | 5 | 5 | 0 | 0 |", table, "no usage: resident; above its target: none")
        self.assertIn("| all (2 samples) | 1.5 | 92 | 65 | 69 | 90 | 26 |", table)


if __name__ == "__main__":
    unittest.main()
