"""calltime.py: a run's calls grouped by where their time went."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import calltime  # noqa: E402


def call(lat, handler, majflt, minflt, late="0.3", to_handler="1.0", pre="2", error="", cpu="", wait="", pre_wait=""):
    return {"latency_ms": str(lat), "handler_ms": str(handler), "majflt": str(majflt), "minflt": str(minflt),
            "late_ms": late, "to_handler_ms": to_handler, "pre_majflt": pre, "error": error,
            "handler_cpu_ms": cpu, "handler_wait_ms": wait, "pre_wait_ms": pre_wait}


class CallTime(unittest.TestCase):
    def test_each_call_goes_to_the_group_its_time_went_to(self):
        self.assertEqual(calltime.group(call(70, 60, 9000, 100)), "cold")
        self.assertEqual(calltime.group(call(7.9, 3, 49, 100)), "warm within 8 ms")
        self.assertEqual(calltime.group(call(25, 22, 0, 13000)), "warm, mapped in the handler")
        self.assertEqual(calltime.group(call(40, 35, 0, 10)), "warm, long handler without faults")
        self.assertEqual(calltime.group(call(40, 35, 0, 10, cpu="30", wait="4")), "warm, long handler without faults")
        self.assertEqual(calltime.group(call(40, 35, 0, 10, cpu="3", wait="31")), "warm, handler waiting for a CPU")
        self.assertEqual(calltime.group(call(30, 3, 0, 10, late="25")), "warm, time before the handler")

    def test_the_split_of_a_group_and_calls_without_it(self):
        rows = [call(30, 3, 0, 10, late="25", to_handler="1", pre="4"),
                call(20, 4, 0, 10, late="1", to_handler="15", pre="10"),
                call(12, 2, 0, 10, late="", to_handler="", pre=""),  # written before the columns
                call(60000, 0, 0, 0, error="TimeoutError")]
        s = calltime.split(rows)["warm, time before the handler"]
        self.assertEqual(s["calls"], 3, "the failed call is left out")
        self.assertEqual((s["late_p50"], s["late_max"]), (13.0, 25.0))
        self.assertEqual((s["to_handler_p50"], s["to_handler_max"]), (8.0, 15.0))
        self.assertEqual(s["pre_majflt_per_call"], 7.0)
        self.assertEqual(calltime.split(rows)["cold"]["latency_p50"], None, "no cold call")
        self.assertEqual(s["cpu_p50"], None, "calls written before the function told its CPU")
        both = calltime.split([call(20, 12, 0, 10, cpu="2", wait="9", pre_wait="1"),
                               call(30, 20, 0, 10, cpu="4", wait="15", pre_wait="")])
        self.assertEqual(both["warm, handler waiting for a CPU"]["pre_wait_p50"], 1.0, "where it was told")
        self.assertEqual((both["warm, handler waiting for a CPU"]["cpu_p50"],
                          both["warm, handler waiting for a CPU"]["wait_p50"]), (3.0, 12.0))


if __name__ == "__main__":
    unittest.main()
