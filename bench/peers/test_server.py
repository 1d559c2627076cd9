"""server.py's pure parts. Run: python3 -m unittest discover -s bench/peers"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import server  # noqa: E402

INTERRUPTS = """           CPU0       CPU1
  0:         45          0   IO-APIC    2-edge      timer
NMI:          0          0   Non-maskable interrupts
TLB:      12345        678   TLB shootdowns
TRM:          0          0   Thermal event interrupts
"""


class TlbShootdowns(unittest.TestCase):
    def test_the_tlb_line_summed_over_the_cpus(self):
        self.assertEqual(server.tlb_shootdowns(INTERRUPTS), 13023)

    def test_no_tlb_line_counts_none(self):
        self.assertEqual(server.tlb_shootdowns(INTERRUPTS.replace("TLB:", "XYZ:")), 0)


STAT = """cpu  3022000 1034 1696745 5145983 99811 200 32984 165242 0 0
cpu0 1479271 515 822577 2671590 18767 100 8065 81422 0 0
intr 1 2 3
"""


class HostCpuTimes(unittest.TestCase):
    def test_interrupts_and_steal_in_seconds(self):
        hz = os.sysconf("SC_CLK_TCK")
        self.assertEqual(server.host_cpu_times(STAT), {"irq": (200 + 32984) / hz, "steal": 165242 / hz})

    def test_no_cpu_line_counts_nothing(self):
        self.assertEqual(server.host_cpu_times("intr 1 2 3\n"), {})


if __name__ == "__main__":
    unittest.main()
