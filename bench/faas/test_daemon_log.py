"""The shared harness reads a daemon log gzipped as bench/faas keeps it
(docs/faas/*/…/memext-daemon-*.log.gz) the same as a plain one."""
import gzip
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import memextbench as mb  # noqa: E402

LOG = ('not json\n'
       '{"timestamp":"2026-11-26T01:00:00.500000Z","event":"woke","context":"/a","via":"event"}\n'
       '{"timestamp":"2026-11-26T01:00:01.000000Z","event":"reclaimed","context":"/a","ms":66.0}\n')


class DaemonLog(unittest.TestCase):
    def test_a_gzipped_log_reads_as_the_plain_one(self):
        with tempfile.TemporaryDirectory() as d:
            plain, packed = os.path.join(d, "x.log"), os.path.join(d, "x.log.gz")
            with open(plain, "w") as f:
                f.write(LOG)
            with gzip.open(packed, "wt") as f:
                f.write(LOG)
            events = mb.daemon_events(packed)
            self.assertEqual(events, mb.daemon_events(plain))
            self.assertEqual([e["event"] for e in events], ["woke", "reclaimed"])
            self.assertEqual([e["at"] for e in mb.daemon_events(packed, "reclaimed")], [1795654801.0])


if __name__ == "__main__":
    unittest.main()
