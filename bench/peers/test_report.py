"""Unit tests of bench/peers' pure parts: the noise's service, the targets'
verdict, the static limits' fair share. Run: python3 -m unittest discover -s bench/peers"""
import contextlib
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402
import slow_writes  # noqa: E402

MIB = 1 << 20


def row(mode, p99, tput, noise_p50, dram):
    return {"mode": mode, "round": 0, "throughput": tput, "p50": p99 / 4, "p99": p99, "p999": p99 * 2,
            "requests": 1, "noise_ops": 3, "noise_p50": noise_p50, "noise_p99": noise_p50, "noise_slowdown_p50": None,
            "dram_mean_mib": dram, "dram_max_mib": dram, "swapin_mib": 0, "swapout_mib": 0, "zswpin_mib": 0, "zswpout_mib": 0, "cpu_controller_s": 0,
            "cpu_kswapd_s": 0, "cpu_kdamond_s": 0, "damon_applied_mib": None, "window_s": 10, "oom_kills": 0, "failed": ""}


def failed(mode):
    return {**dict.fromkeys(report.COLUMNS), "mode": mode, "round": 0, "throughput": 0.0, "requests": 0,
            "failed": "critical container OOM-killed", "oom_kills": 1}


class NoiseService(unittest.TestCase):
    def test_latency_percentiles_and_job_slowdown(self):
        ops = [("job", 30_000.0, 20_000.0), ("job", 20_000.0, 20_000.0), ("job", 60_000.0, 20_000.0)]
        s = report.noise_service(ops)
        self.assertEqual(s["noise_ops"], 3)
        self.assertEqual(s["noise_p50"], 30_000.0)
        self.assertEqual(s["noise_p99"], 60_000.0)
        self.assertEqual(s["noise_slowdown_p50"], 1.5)

    def test_no_operations_in_the_window(self):
        self.assertEqual(report.noise_service([]), {"noise_ops": 0, "noise_p50": None, "noise_p99": None,
                                                    "noise_slowdown_p50": None})


class Verdict(unittest.TestCase):
    def test_memext_within_targets_and_undominated(self):
        med = report.medians([row("ideal", 1.0, 1000, 1.0, 3000), row("memext", 1.4, 900, 100.0, 1000),
                              row("limits", 1.2, 950, 200.0, 1000)])
        v = report.verdict(med)
        self.assertEqual((v["p99_vs_ideal"], v["tput_vs_ideal"], v["dominated_by"], v["met"]), (1.4, 0.9, [], True))

    def test_a_peer_better_on_both_with_no_more_dram_dominates(self):
        med = report.medians([row("ideal", 1.0, 1000, 1.0, 3000), row("memext", 1.4, 900, 100.0, 1000),
                              row("limits", 1.2, 950, 50.0, 1000), row("zswap", 1.1, 990, 20.0, 1001)])
        v = report.verdict(med)
        self.assertEqual(v["dominated_by"], ["limits"])  # zswap used more DRAM
        self.assertFalse(v["met"])

    def test_a_memext_variant_is_not_a_peer(self):
        med = report.medians([row("ideal", 1.0, 1000, 1.0, 3000), row("memext", 1.4, 900, 100.0, 1000),
                              row("memext+wake_cpu_weight=20", 1.2, 950, 50.0, 1000)])
        v = report.verdict(med)
        self.assertEqual((v["dominated_by"], v["met"]), ([], True))

    def test_the_oracle_bound_is_not_a_peer(self):
        med = report.medians([row("ideal", 1.0, 1000, 1.0, 3000), row("memext", 1.4, 900, 100.0, 1000),
                              row("oracle", 1.2, 950, 50.0, 600)])
        self.assertEqual(report.verdict(med)["dominated_by"], [])
        self.assertIn("(incomplete)", report.headline_lines({("postgres", "burst"): [
            row("ideal", 1.0, 1000, 1.0, 3000), row("memext", 1.4, 900, 100.0, 1000),
            row("oracle", 1.2, 950, 50.0, 600)]}, {"postgres-burst": report.verdict(med)})[2])

    def test_the_split_oracle_is_not_a_peer_either(self):
        med = report.medians([row("ideal", 1.0, 1000, 1.0, 3000), row("memext", 1.4, 900, 100.0, 1000),
                              row("oracle-split", 1.1, 990, 50.0, 600), row("split", 1.1, 990, 50.0, 600)])
        self.assertEqual(report.verdict(med)["dominated_by"], [])

    def test_p99_over_target_is_missed(self):
        med = report.medians([row("ideal", 1.0, 1000, 1.0, 3000), row("memext", 1.6, 900, 100.0, 1000)])
        self.assertFalse(report.verdict(med)["met"])

    def test_a_failed_mode_neither_dominates_nor_meets_targets(self):
        med = report.medians([row("ideal", 1.0, 1000, 1.0, 3000), row("memext", 1.4, 900, 100.0, 1000),
                              failed("zswap")])
        self.assertEqual((med["zswap"]["throughput"], med["zswap"]["p99"]), (0.0, None))
        self.assertEqual(report.verdict(med)["dominated_by"], [])
        med = report.medians([row("ideal", 1.0, 1000, 1.0, 3000), failed("memext")])
        self.assertFalse(report.verdict(med)["met"])
        lines, _ = report.summary_lines({("redis", "burst"): [row("ideal", 1.0, 1000, 1.0, 3000), failed("memext")]})
        self.assertIn("failed: critical container OOM-killed", "\n".join(lines))

    def test_noise_that_completed_nothing_is_not_a_met_target_and_loses_to_any_served_peer(self):
        starved = {**row("memext", 1.2, 950, 1.0, 1000), "noise_p50": None, "noise_ops": 0}
        med = report.medians([row("ideal", 1.0, 1000, 1.0, 3000), starved, row("limits", 1.1, 900, 500.0, 900)])
        v = report.verdict(med)
        self.assertTrue(v["noise_starved"])
        self.assertEqual(v["dominated_by"], ["limits"])
        self.assertFalse(v["met"])

    def test_medians_over_rounds(self):
        rows = [row("memext", p, 900, 1.0, 1) for p in (1.0, 5.0, 2.0)]
        self.assertEqual(report.medians(rows)["memext"]["p99"], 2.0)


class Headline(unittest.TestCase):
    def test_memext_against_ideal_and_the_peer_with_the_best_critical_throughput(self):
        rows = {("redis", "burst"): [row("ideal", 1.0, 1000, 1.0, 3000), row("memext", 2.0, 500, 5000.0, 400),
                                     row("limits", 3.0, 600, 4000.0, 450), row("linux", 9.0, 100, 7000.0, 512)]}
        _, verdicts = report.summary_lines(rows)
        line = report.headline_lines(rows, verdicts)[2]
        self.assertEqual(line, "| redis x burst | 0.50x / 2.0x | limits 0.60x / 3.0x | 5.0 s / 4.0 s / 7.0 s "
                               "| 400 / 450 | missed |")

    def test_a_cell_without_ideal_is_incomplete(self):
        rows = {("redis", "grow"): [row("memext", 2.0, 500, 5000.0, 400)]}
        _, verdicts = report.summary_lines(rows)
        self.assertIn("(incomplete)", report.headline_lines(rows, verdicts)[2])


class FairShare(unittest.TestCase):
    def test_what_the_critical_container_leaves_split_evenly(self):
        sys.argv = ["x"]
        import run  # noqa: E402
        self.assertEqual(run.limit_share(1024 * MIB, 256 * MIB, 4), 192 * MIB)
        self.assertEqual(run.limit_share(1024 * MIB, 1100 * MIB, 4), 16 * MIB)  # never below 16 MiB


class Oracles(unittest.TestCase):
    def setUp(self):
        sys.argv = ["x"]
        import run  # noqa: E402
        self.run = run

    def refused(self, *argv):
        with open(os.devnull, "w") as null, contextlib.redirect_stderr(null), self.assertRaises(SystemExit):
            self.run.parse(list(argv))

    def test_only_the_burst_noise_has_an_oracle(self):
        self.refused("--modes", "ideal,oracle-split", "--noise", "fetch")
        self.refused("--modes", "oracle", "--noise", "burst,grow")

    def test_the_noise_cpu_weight_is_in_the_kernels_range(self):
        self.refused("--modes", "oracle", "--noise", "burst", "--oracle-cpu-shares", "1")
        self.refused("--modes", "oracle", "--noise", "burst", "--oracle-cpu-shares", "300000")

    def test_the_split_noise_cpu_cap_is_in_range(self):
        self.refused("--modes", "split", "--noise", "burst", "--split-cpu-max", "0")
        self.refused("--modes", "split", "--noise", "burst", "--split-cpu-max", "65")

    def test_the_split_noise_cpus_are_a_cpu_list(self):
        self.refused("--modes", "split", "--noise", "burst", "--split-cpus", "1;rm")
        self.refused("--modes", "split", "--noise", "burst", "--split-cpus", "")

    def test_the_split_and_serial_options_need_their_modes(self):
        self.refused("--modes", "ideal,memext", "--noise", "burst", "--split-cpu-max", "0.3")
        self.refused("--modes", "ideal,linux", "--noise", "burst", "--split-cpus", "1")
        self.refused("--modes", "ideal,split", "--noise", "burst", "--oracle-serial")

    def test_the_split_noise_cpu_cap_is_a_quota_per_period(self):
        self.assertEqual(self.run.cpu_quota_us(0.25), 25_000)
        self.assertEqual(self.run.cpu_quota_us(2), 200_000)
        self.assertEqual(self.run.cpu_quota_us(0.001), 1000, "the kernel's least quota is 1 ms")

    def test_the_oracles_are_not_run_unless_asked(self):
        self.assertNotIn("oracle", self.run.DEFAULT_MODES)
        self.assertNotIn("oracle-split", self.run.DEFAULT_MODES)
        self.assertNotIn("split", self.run.DEFAULT_MODES)


class SlowWrites(unittest.TestCase):
    def test_writes_are_tallied_per_run_by_what_the_context_last_did(self):
        ev = lambda **kw: json.dumps(kw)  # noqa: E731
        lines = [ev(message="memext daemon: cgroup v1, capacity 512MiB"),
                 ev(event="settled", context="/a"),
                 ev(event="slow-write", context="/a", value="16777216", ms=300.0),
                 ev(event="pushing-out", context="/a"),
                 ev(event="slow-write", context="/a", value="16777216", ms=20.0),
                 ev(event="slow-write", context="/b", value="1", ms=12.0),
                 "not json",
                 ev(message="memext daemon: cgroup v1, capacity 512MiB"),
                 ev(event="slow-write", context="/a", value="1", ms=11.0)]
        runs = slow_writes.tally(lines)
        self.assertEqual(len(runs), 2, "a daemon start begins a run")
        self.assertEqual(dict(runs[0]["ms"]), {"settled": 300.0, "pushing-out": 20.0, "-": 12.0})
        self.assertEqual(dict(runs[1]["count"]), {"-": 1}, "what a context did is not carried across runs")


if __name__ == "__main__":
    unittest.main()
