"""The Senpai peer's controller on stall-time traces: what the published
algorithm does with no pressure, with pressure above its target, and at the
edges of its range. Run: python3 -m unittest discover -s bench/peers."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import senpai  # noqa: E402

MIB = 1 << 20


def run(ctl, deltas):
    """Feeds one stall-time growth (µs) per second; returns the factors."""
    total, out = ctl.last_total, []
    for d in deltas:
        total += d
        out.append(ctl.tick(total))
    return out


class ControllerTest(unittest.TestCase):
    def test_no_pressure_probes_down_one_percent_every_interval(self):
        ctl = senpai.Controller(senpai.Params(), total=1000)
        out = run(ctl, [0] * 13)
        # Grace for the first interval (6 ticks), then a probe every 6 ticks.
        self.assertEqual([i for i, f in enumerate(out) if f is not None], [6, 12])
        self.assertEqual(out[6], -0.01)

    def test_pressure_below_target_probes_less(self):
        ctl = senpai.Controller(senpai.Params(), total=0)
        out = run(ctl, [0] * 6 + [800])  # integral 800 µs, target 10,000
        # err = 10000 / 800 = 12.5; (12.5 / 10)^2 * 0.01 = 0.0156 -> capped at 0.01.
        self.assertEqual(out[6], -0.01)
        ctl = senpai.Controller(senpai.Params(), total=0)
        out = run(ctl, [0] * 6 + [5000])  # err 2: (0.2)^2 * 0.01
        self.assertAlmostEqual(out[6], -0.0004)

    def test_pressure_above_target_backs_off_at_once_and_resets(self):
        ctl = senpai.Controller(senpai.Params(), total=0)
        out = run(ctl, [0, 0, 100_000])  # 10x the target within one tick
        # err 10: (10 / 20)^2 * 1.0 = 0.25, without waiting for the interval.
        self.assertEqual(out[:2], [None, None])
        self.assertAlmostEqual(out[2], 0.25)
        self.assertEqual(ctl.integral, 0)
        self.assertEqual(ctl.grace_ticks, 5)
        out = run(ctl, [0, 0, 400_000])  # 40x: capped at MAX_BACKOFF
        self.assertEqual(out[2], 1.0)

    def test_limits_stay_in_range_and_page_aligned_and_restart_from_usage(self):
        p = senpai.Params(min_size=100 * MIB, max_size=1024 * MIB)
        self.assertEqual(senpai.scaled(None, -0.01, p, 300 * MIB + 5), 300 * MIB)
        self.assertEqual(senpai.scaled(200 * MIB, -0.01, p, 0) % 4096, 0)
        self.assertEqual(senpai.scaled(101 * MIB, -0.5, p, 0), 100 * MIB)
        self.assertEqual(senpai.scaled(1000 * MIB, 1.0, p, 0), 1024 * MIB)

    def test_stall_total_is_read_from_the_some_line(self):
        text = "some avg10=0.00 avg60=0.00 avg300=0.00 total=123456\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=99\n"
        self.assertEqual(senpai.stall_total(text), 123456)
        with self.assertRaises(ValueError):
            senpai.stall_total("full total=1\n")


if __name__ == "__main__":
    unittest.main()


class V2ReclaimTest(unittest.TestCase):
    """On v2 Senpai probes through memory.reclaim and sets no limit."""

    def setUp(self):
        import tempfile
        self.dir = tempfile.TemporaryDirectory()
        for name, text in (("memory.current", "104857600"), ("memory.reclaim", ""),
                           ("memory.pressure", "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")):
            with open(os.path.join(self.dir.name, name), "w") as f:
                f.write(text)
        self.cg = senpai.Cgroup(self.dir.name, self.dir.name, v2=True)

    def tearDown(self):
        self.dir.cleanup()

    def reclaimed(self):
        with open(os.path.join(self.dir.name, "memory.reclaim")) as f:
            return f.read()

    def test_a_probe_reclaims_its_share_of_usage_page_aligned(self):
        p = senpai.Params()
        self.cg.start(p)
        self.assertEqual(self.cg.apply(-0.01, p), "reclaim 1048576")
        self.assertEqual(self.reclaimed(), "1048576")
        self.assertEqual(senpai.reclaim_bytes(1000000, -0.01), 8192)

    def test_a_back_off_writes_nothing_and_restore_is_a_no_op(self):
        p = senpai.Params()
        self.cg.start(p)
        self.assertEqual(self.cg.apply(0.5, p), "back off")
        self.cg.restore()
        self.assertEqual(self.reclaimed(), "")
        self.assertFalse(os.path.exists(os.path.join(self.dir.name, "memory.high")))
