"""noise.py's heap: private anonymous memory unless asked for shared.
Run: python3 -m unittest discover -s bench/peers"""
import ctypes
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import noise  # noqa: E402


def sharing(m):
    """The p/s flag of the /proc/self/maps line that holds mmap `m`."""
    view = ctypes.c_char.from_buffer(m)
    addr = ctypes.addressof(view)
    del view  # the mmap cannot be closed while it is exported
    with open("/proc/self/maps") as f:
        for line in f:
            lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
            if lo <= addr < hi:
                return line.split()[1][3]
    raise AssertionError("mapping not found")


class Heap(unittest.TestCase):
    def test_the_heap_is_private_by_default_and_shared_when_asked(self):
        for args, want in (((), "p"), (("private",), "p"), (("shared",), "s")):
            m = noise.heap(1 << 20, *args)
            try:
                self.assertEqual(sharing(m), want, args)
            finally:
                m.close()

    def test_an_unknown_kind_is_refused(self):
        with self.assertRaises(ValueError):
            noise.heap(1 << 20, "huge")


if __name__ == "__main__":
    unittest.main()
