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


if __name__ == "__main__":
    unittest.main()
