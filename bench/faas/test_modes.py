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
                     "memext-idle+fast_wakes=true+idle_after=5s", "memext+tiers.page_cluster=0",
                     "memext+tiers.large_folio_kib=64"):
            self.assertTrue(run.known_mode(mode), mode)
        self.assertEqual(run.base_mode("memext-idle+fast_wakes=true"), "memext-idle")

    def test_no_variant_of_a_peer_nor_a_malformed_one(self):
        for mode in ("linux+fast_wakes=true", "memextx+a=b", "memext+", "memext+=x", "memext+daemon.=x", "lunix",
                     "memext+tiers.zram=1", "memext+tiers.page_cluster=x", "memext+tiers.large_folio_kib=64k"):
            self.assertFalse(run.known_mode(mode), mode)


class Foretold(unittest.TestCase):
    """`memext+daemon.foretold_calls=trace`: the daemon's setting made the
    bench's file, written from the trace's calls by cgroup."""

    def test_the_trace_value_becomes_the_work_file_and_other_pairs_stay(self):
        pairs = [("tick", '"1s"'), ("foretold_calls", '"trace"')]
        daemon, path, classes = run.foretold_path(pairs, "/w")
        self.assertEqual((path, classes), ("/w/foretold.json", None))
        self.assertEqual(daemon, [("tick", '"1s"'), ("foretold_calls", '"/w/foretold.json"')])
        self.assertEqual(run.foretold_path(pairs[:1], "/w"), (pairs[:1], None, None))
        self.assertEqual(run.foretold_path([("foretold_calls", '"timers"')], "/w")[2], {"timer"})
        self.assertTrue(run.known_mode("memext+daemon.foretold_calls=trace"))

    def test_each_cgroup_gets_its_own_calls_from_the_start(self):
        calls = [(0.5, 1), (1.0, 0), (2.25, 1)]
        self.assertEqual(run.foretold_calls(calls, ["/f/a", "/f/b", "/f/c"], 1000.0),
                         {"/f/a": [1001.0], "/f/b": [1000.5, 1002.25], "/f/c": []})
        self.assertEqual(run.foretold_calls(calls, ["/f/a", "/f/b", "/f/c"], 1000.0, {"timer"},
                                            ["poisson", "timer", "timer"]),
                         {"/f/b": [1000.5, 1002.25], "/f/c": []})


class LargeFolios(unittest.TestCase):
    """`tiers.large_folio_kib`: the kernel's knob for that size set to always,
    the host's setting put back by the cleanup; a size the kernel lacks named
    with the sizes it has (on a fake THP directory)."""

    def test_set_to_always_and_restored_and_a_missing_size_refused(self):
        import tempfile
        import memextbench as mb
        with tempfile.TemporaryDirectory() as thp:
            os.makedirs(f"{thp}/hugepages-64kB")
            knob = f"{thp}/hugepages-64kB/enabled"
            with open(knob, "w") as f:
                f.write("always inherit madvise [never]\n")
            saved, mb.THP = mb.THP, thp
            try:
                cleanup = mb.Cleanup()
                mb.large_folios_on(64, cleanup)
                with open(knob) as f:
                    self.assertEqual(f.read(), "always")
                cleanup.run(0)
                with open(knob) as f:
                    self.assertEqual(f.read(), "never")
                with self.assertRaisesRegex(ValueError, "no anonymous large folios of 32 KiB here .sizes: 64kB."):
                    mb.large_folios_on(32, mb.Cleanup())
            finally:
                mb.THP = saved


class CallRows(unittest.TestCase):
    def test_a_call_is_written_with_where_its_time_went_and_a_failed_one_with_blanks(self):
        names, functions = ["fn0000", "fn0001"], [{"cls": "timer"}, {"cls": "poisson"}]
        served = (1, 2.5, 0.0421, 3.5, None, 7, 900, 0.0012, 0.0304, 2, 40, 2.75, 0.5, 1, 3.25)
        failed = (0, 3.0, 60.0, None, "TimeoutError: x", None, None, 0.002, None, None, None, None, None, None, None)
        self.assertEqual(run.call_row(served, names, functions),
                         "fn0001,poisson,2.500,42.10,3.5,,7,900,1.20,30.40,2,40,2.75,0.5,1,3.25\n")
        self.assertEqual(run.call_row(failed, names, functions),
                         "fn0000,timer,3.000,60000.00,,TimeoutError: x,,,2.00,,,,,,,\n")
        self.assertEqual(len(run.CALLS_HEADER.split(",")), len(run.call_row(served, names, functions).split(",")))



class FillByMemext(unittest.TestCase):
    """--fill memext: the cap is set only once memext has the parent under it."""

    class Server:
        def __init__(self, usages, refusals=0):
            self.usages, self.refusals, self.caps = list(usages), refusals, []

        def usage(self):
            return self.usages.pop(0) if len(self.usages) > 1 else self.usages[0]

        def set_cap(self, cap):
            if self.refusals:
                self.refusals -= 1
                raise OSError(16, "Device or resource busy")
            self.caps.append(cap)

    def run_fill(self, server, deadline_s=300.0):
        now = [0.0]

        def sleep(s):
            now[0] += s
        return run.fill_by_memext(server, 100 * run.MIB, deadline_s, clock=lambda: now[0], sleep=sleep), now[0]

    def test_the_cap_waits_for_the_parent_to_be_under_it(self):
        server = self.Server([300 * run.MIB, 120 * run.MIB, 90 * run.MIB, 60 * run.MIB])
        under, waited = self.run_fill(server)
        self.assertTrue(under)
        self.assertEqual(waited, 3.0)  # 60 MiB: the first reading 32 MiB under the cap
        self.assertEqual(server.caps, [100 * run.MIB])

    def test_past_the_deadline_the_cap_is_set_all_the_same_and_a_refusal_retried(self):
        server = self.Server([300 * run.MIB], refusals=2)
        under, waited = self.run_fill(server, deadline_s=5.0)
        self.assertFalse(under)
        self.assertEqual(server.caps, [100 * run.MIB])
        self.assertEqual(waited, 5.0 + 2.0)


if __name__ == "__main__":
    unittest.main()
