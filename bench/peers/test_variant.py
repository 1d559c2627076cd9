"""A memext variant's extend settings in the daemon's policy file (bench/memextbench.py's
memext_config, as bench/peers/run.py calls it). Run: python3 -m unittest discover -s bench/peers"""
import os
import sys
import tempfile
import tomllib
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import memextbench as mb  # noqa: E402


class VariantConfig(unittest.TestCase):
    def config(self, extend, daemon=()):
        with tempfile.TemporaryDirectory() as work:
            path = mb.memext_config(work, "/memext-peers", "/x/root", ["pc-critical"], 10.0, extend=extend,
                                    daemon=daemon)
            with open(path, "rb") as f:
                return tomllib.load(f)

    def test_a_variant_setting_replaces_the_benchs_own(self):
        ext = self.config([("idle_after", '"3s"'), ("fast_wakes", "true")])["class"]["extend"]
        self.assertEqual(ext["idle_after"], "3s")
        self.assertEqual(ext["fast_wakes"], True)
        self.assertEqual(ext["floor"], "16MiB")

    def test_a_critical_setting_goes_to_the_critical_class(self):
        extend, daemon = mb.variant_settings("memext+critical.keep_anon=false+fast_wakes=true")
        cfg = self.config(extend, daemon)
        self.assertEqual(cfg["class"]["critical"], {"keep_anon": False})
        self.assertNotIn("critical.keep_anon", cfg["class"]["extend"])
        self.assertEqual(cfg["class"]["extend"]["fast_wakes"], True)

    def test_a_daemon_setting_goes_to_the_daemon_table(self):
        cfg = self.config((), daemon=[("reclaim", '"loop"')])
        self.assertEqual(cfg["daemon"]["reclaim"], "loop")
        self.assertEqual(cfg["daemon"]["tick"], "1s")
        self.assertNotIn("reclaim", cfg["class"]["extend"])

    def test_a_variant_names_daemon_settings_apart(self):
        self.assertEqual(mb.variant("memext+daemon.reclaim=loop+fast_wakes=true"),
                         [("daemon.reclaim", '"loop"'), ("fast_wakes", "true")])
        self.assertEqual(mb.variant_settings("memext-idle+daemon.reclaim=page-out+floor=4MiB"),
                         ([("floor", '"4MiB"')], [("reclaim", '"page-out"')]))
        self.assertEqual(mb.variant("memext"), [])
        self.assertEqual(mb.variant("memext+cpu_max=0.3+floor=4MiB+wake_cpu_weight=20"),
                         [("cpu_max", "0.3"), ("floor", '"4MiB"'), ("wake_cpu_weight", "20")],
                         "numbers bare, with or without a fraction")
        with self.assertRaises(ValueError):
            mb.variant("memext+daemon.=x")

    def test_a_tiers_setting_goes_to_the_tiers_alone(self):
        mode = "memext+tiers.page_cluster=0+floor=4MiB"
        self.assertEqual(mb.variant_tiers(mode), {"page_cluster": 0})
        self.assertEqual(mb.variant_settings(mode), ([("floor", '"4MiB"')], []))
        self.assertEqual(mb.variant_tiers("memext+floor=4MiB"), {})
        self.assertEqual(mb.variant_tiers("memext+tiers.size_mib=8192+tiers.page_cluster=0"),
                         {"size_mib": 8192, "page_cluster": 0})
        with self.assertRaises(ValueError):
            mb.variant_tiers("memext+tiers.zram=1")
        with self.assertRaises(ValueError):
            mb.variant_tiers("memext+tiers.size_mib=0")

    def test_without_a_variant_the_benchs_settings(self):
        ext = self.config(())["class"]["extend"]
        self.assertEqual(ext, {"idle_after": "10.0s", "floor": "16MiB"})


if __name__ == "__main__":
    unittest.main()
