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


def resident_kib(m):
    """Rss of the /proc/self/smaps entry that holds mmap `m`, in KiB."""
    view = ctypes.c_char.from_buffer(m)
    addr = ctypes.addressof(view)
    del view
    inside = False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()[0]
            if "-" in head and ":" not in head:
                lo, hi = (int(x, 16) for x in head.split("-"))
                inside = lo <= addr < hi
            elif inside and head == "Rss:":
                return int(line.split()[1])
    raise AssertionError("mapping not found")


def swap_on():
    with open("/proc/swaps") as f:
        return len(f.readlines()) > 1


class Settle(unittest.TestCase):
    def test_pageout_pages_the_heap_out_and_keep_leaves_it(self):
        size = 8 << 20
        for after in ("keep", "pageout"):
            m = noise.heap(size)
            try:
                noise.fill(m, 0, size, noise.pattern())
                self.assertGreaterEqual(resident_kib(m), size // 1024 * 9 // 10)
                noise.settle(m, after)  # the kernel refuses an unknown advice (EINVAL)
                if after == "keep":
                    self.assertGreaterEqual(resident_kib(m), size // 1024 * 9 // 10)
                elif swap_on():
                    self.assertLess(resident_kib(m), size // 1024 // 2, "MADV_PAGEOUT left the heap resident")
            finally:
                m.close()

    def test_an_unknown_after_is_refused_before_the_heap_is_made(self):
        with self.assertRaises(ValueError):
            noise.burst(None, 1, "cron", 1.0, 0.0, 0, "private", "drop")


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
