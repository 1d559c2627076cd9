"""noise.py's heap: private anonymous memory unless asked for shared.
Run: python3 -m unittest discover -s bench/peers"""
import contextlib
import ctypes
import os
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import noise  # noqa: E402


def address(m):
    """Where mmap `m` starts in this process."""
    view = ctypes.c_char.from_buffer(m)
    addr = ctypes.addressof(view)
    del view  # the mmap cannot be closed while it is exported
    return addr


def sharing(m):
    """The p/s flag of the /proc/self/maps line that holds mmap `m`."""
    addr = address(m)
    with open("/proc/self/maps") as f:
        for line in f:
            lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
            if lo <= addr < hi:
                return line.split()[1][3]
    raise AssertionError("mapping not found")


def resident_kib(m):
    """Rss of the /proc/self/smaps entry that holds mmap `m`, in KiB."""
    addr, inside = address(m), False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()[0]
            if "-" in head and ":" not in head:
                lo, hi = (int(x, 16) for x in head.split("-"))
                inside = lo <= addr < hi
            elif inside and head == "Rss:":
                return int(line.split()[1])
    raise AssertionError("mapping not found")


@contextlib.contextmanager
def some_swap():
    """A swap area to page out to: the host's, or (as root) a 64 MiB swap
    file of the test's own, switched off and removed afterwards."""
    with open("/proc/swaps") as f:
        if len(f.readlines()) > 1:
            yield
            return
    if os.geteuid() != 0:
        raise unittest.SkipTest("no swap area, and not root to make one")
    with tempfile.TemporaryDirectory(dir="/var/tmp") as d:
        path = os.path.join(d, "swap")
        subprocess.run(["fallocate", "-l", "64M", path], check=True)
        os.chmod(path, 0o600)
        subprocess.run(["mkswap", path], check=True, capture_output=True)
        subprocess.run(["swapon", path], check=True)
        try:
            yield
        finally:
            subprocess.run(["swapoff", path], check=True)


def filled(size):
    m = noise.heap(size)
    noise.fill(m, 0, size, noise.pattern())
    return m


class Settle(unittest.TestCase):
    SIZE = 8 << 20

    def test_keep_leaves_the_heap_resident(self):
        m = filled(self.SIZE)
        try:
            noise.settle(m, "keep")
            self.assertGreaterEqual(resident_kib(m), self.SIZE // 1024 * 9 // 10)
        finally:
            m.close()

    def test_pageout_pages_the_heap_out(self):
        with some_swap():
            m = filled(self.SIZE)
            try:
                self.assertGreaterEqual(resident_kib(m), self.SIZE // 1024 * 9 // 10)
                noise.settle(m, "pageout")
                self.assertLess(resident_kib(m), self.SIZE // 1024 // 2, "MADV_PAGEOUT left the heap resident")
            finally:
                m.close()

    def test_pageout_willneed_pages_out_and_reads_back_at_the_wake(self):
        with some_swap():
            m = filled(self.SIZE)
            try:
                noise.settle(m, "pageout-willneed")
                self.assertLess(resident_kib(m), self.SIZE // 1024 // 2, "the heap left resident at the sleep")
                self.assertGreater(noise.wake(m, self.SIZE, "pageout-willneed"), 0.0)
                self.assertGreaterEqual(resident_kib(m), self.SIZE // 1024 * 9 // 10)
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


class OneAtATime(unittest.TestCase):
    def test_a_wake_waits_for_the_one_holding_the_lock(self):
        import threading
        with tempfile.TemporaryDirectory() as d:
            lock = os.path.join(d, "wake.lock")
            m = filled(1 << 20)
            held = threading.Event()

            def holder():
                with noise.one_at_a_time(lock):
                    held.set()
                    time.sleep(0.3)
            t = threading.Thread(target=holder)
            t.start()
            held.wait()
            start = time.monotonic()
            with noise.one_at_a_time(lock):
                noise.wake(m, 1 << 20, "keep")
            waited = time.monotonic() - start
            t.join()
            self.assertGreaterEqual(waited, 0.25, "the second wake ran while the first held the lock")

    def test_no_lock_no_wait(self):
        start = time.monotonic()
        with noise.one_at_a_time(None):
            pass
        self.assertLess(time.monotonic() - start, 0.1)
