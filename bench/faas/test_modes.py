"""Which --modes bench/faas accepts: its modes, and variants of the memext
ones with their settings. Run: python3 -m unittest discover -s bench/faas"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402


class Modes(unittest.TestCase):
    def test_the_modes_and_variants_of_the_memext_ones(self):
        for mode in ("ideal", "memext", "memext-idle", "memext+daemon.reclaim=page-out",
                     "memext-idle+fast_wakes=true+idle_after=5s"):
            self.assertTrue(run.known_mode(mode), mode)
        self.assertEqual(run.base_mode("memext-idle+fast_wakes=true"), "memext-idle")

    def test_no_variant_of_a_peer_nor_a_malformed_one(self):
        for mode in ("linux+fast_wakes=true", "memextx+a=b", "memext+", "memext+=x", "memext+daemon.=x", "lunix"):
            self.assertFalse(run.known_mode(mode), mode)


if __name__ == "__main__":
    unittest.main()
