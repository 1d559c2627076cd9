"""A bench/faas function as a plain process: it serves /health and /invoke
on its Unix socket with its heap resident, refuses a bad heap size, and
stops on SIGTERM. Run: python3 -m unittest discover -s bench/faas."""
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import invoke  # noqa: E402


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


class FunctionTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.sock = os.path.join(self.dir.name, "fn.sock")
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "function.py"),
                                      "--socket", self.sock, "--heap-mib", "16"])
        self.addCleanup(self.stop)
        invoke.wait_ready(self.sock, within=20)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.dir.cleanup()

    def test_invoke_touches_a_resident_heap_and_reports_its_time(self):
        self.assertGreater(rss_kib(self.proc.pid), 16 * 1024)
        status, body, secs = invoke.call(self.sock)
        self.assertEqual(status, 200)
        ms, majflt, minflt, began, pre_majflt, pre_minflt, cpu_ms, wait_ms, preempted, pre_wait = invoke.parse_answer(body)
        self.assertGreater(ms, 0)
        self.assertGreater(cpu_ms, 0, "it says the CPU its handler took")
        self.assertLessEqual(cpu_ms, ms + 1.0, "no more than its time")
        self.assertIsNotNone(wait_ms, "and its wait for a CPU (this kernel keeps schedstat)")
        self.assertGreaterEqual(preempted, 0)
        self.assertGreaterEqual(pre_wait, 0, "and the server's before the handler")
        self.assertLess(pre_wait, secs * 1e3, "within the call")
        self.assertLess(abs(time.time() - secs - began), 1.0, "it says when its handler began")
        self.assertEqual(pre_majflt, 0, "nor before it")
        self.assertGreaterEqual(pre_minflt, 0)
        self.assertLess(ms / 1e3, secs + 1e-3)
        self.assertEqual(majflt, 0, "a resident heap takes no major fault")
        self.assertIsNotNone(minflt, "it counts its minor faults")
        self.assertLess(minflt, 16 * 256 // 10, "nor a minor fault a page: its pages are mapped")
        self.assertEqual(invoke.call(self.sock, "/nothing")[0], 404)

    def test_calls_to_a_busy_function_wait_their_turn(self):
        # Stopped, the function accepts nothing: 40 callers queue in its
        # backlog (or wait for room in it) and are all served once it runs.
        import concurrent.futures
        os.kill(self.proc.pid, signal.SIGSTOP)
        with concurrent.futures.ThreadPoolExecutor(40) as pool:
            calls = [pool.submit(invoke.call, self.sock, "/invoke", 20.0) for _ in range(40)]
            time.sleep(0.5)
            os.kill(self.proc.pid, signal.SIGCONT)
            statuses = [c.result()[0] for c in calls]
        self.assertEqual(statuses, [200] * 40)

    def test_an_answer_without_minor_faults_is_read_and_a_bad_one_refused(self):
        self.assertEqual(invoke.parse_answer("1.5 7\n"), invoke.Answer(1.5, 7, None))
        self.assertEqual(invoke.parse_answer("1.5 7 3\n"), invoke.Answer(1.5, 7, 3))
        self.assertEqual(invoke.parse_answer("1.5 7 3 99.5 1 2\n"), (1.5, 7, 3, 99.5, 1, 2, None, None, None, None))
        self.assertEqual(invoke.parse_answer("1.5 7 3 99.5 1 2 1.25 0.5 3 0.75\n"),
                         (1.5, 7, 3, 99.5, 1, 2, 1.25, 0.5, 3, 0.75))
        self.assertEqual(invoke.parse_answer("1.5 7 3 99.5 1 2 1.25 -1 0 -1\n")[7:], (None, 0, None), "no schedstat")
        for bad in ("1.5", "1.5 7 3 4", "1.5 7 3 99.5 1", "1.5 7 3 99.5 1 2 1.25 0.5 3", "x 7"):
            with self.assertRaises(ValueError):
                invoke.parse_answer(bad)

    def test_sigterm_stops_it(self):
        self.proc.send_signal(signal.SIGTERM)
        self.assertEqual(self.proc.wait(timeout=10), 0)
        self.assertFalse(os.path.exists(self.sock), "its socket is removed")
        with self.assertRaises(OSError):
            invoke.call(self.sock, timeout=1)

    def test_a_bad_heap_size_is_refused(self):
        out = subprocess.run([sys.executable, os.path.join(HERE, "function.py"),
                              "--socket", self.sock + "2", "--heap-mib", "0"],
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 2)
        self.assertIn("--heap-mib", out.stderr)


if __name__ == "__main__":
    unittest.main()
