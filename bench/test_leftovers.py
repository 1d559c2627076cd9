import os
import tempfile
import unittest

import leftovers


class LeftoversTest(unittest.TestCase):
    def test_work_dirs_are_the_benches_own(self):
        got = leftovers.work_dirs(["memext-bench-soak-23031", "memext-bench-wake-7", "memext-e2e-1-soak",
                                   "memext-dockerd", "memext-bench-soak-x1", "memext-bench-soak-12/"])
        self.assertEqual(got, [("memext-bench-soak-23031", "soak", 23031), ("memext-bench-wake-7", "wake", 7)])

    def test_a_bench_process_is_python_running_a_bench_script(self):
        self.assertTrue(leftovers.is_bench_process("python3\0bench/soak/run.py\0--smoke\0"))
        self.assertTrue(leftovers.is_bench_process("/usr/bin/python3\0/work/main/bench/scale/readahead.py\0"))
        self.assertFalse(leftovers.is_bench_process("bash\0bench/faas/ab.sh\0"))
        self.assertFalse(leftovers.is_bench_process("sleep\0100\0"))
        self.assertFalse(leftovers.is_bench_process("python3\0-m\0unittest\0"))
        self.assertFalse(leftovers.is_bench_process(""))

    def test_a_script_run_from_its_own_directory_is_a_bench(self):
        self.assertTrue(leftovers.is_bench_process("python3\0run.py\0--smoke\0", "/work/main/bench/faas"))
        self.assertTrue(leftovers.is_bench_process("python3\0./soak/run.py\0", "/work/main/bench"))
        self.assertFalse(leftovers.is_bench_process("python3\0run.py\0", "/home/someone"))
        self.assertFalse(leftovers.is_bench_process("python3\0run.py\0", ""))

    def test_swap_files_under_a_directory(self):
        text = ("Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
                "/var/tmp/memext-bench-soak-23031/swap0  file\t\t2097148\t\t272\t\t10\n"
                "/var/tmp/memext-bench-soak-2303/swap0  file\t\t2097148\t\t0\t\t10\n"
                "/dev/zram0                              partition\t1048572\t\t0\t\t100\n")
        self.assertEqual(leftovers.swap_files_under(text, "/var/tmp/memext-bench-soak-23031"),
                         ["/var/tmp/memext-bench-soak-23031/swap0"])
        self.assertEqual(leftovers.swap_files_under(text.splitlines()[0], "/var/tmp/x"), [])

    def test_every_hierarchy_is_a_place_for_cgroups(self):
        with tempfile.TemporaryDirectory() as top:
            for h in ("memory", "freezer", "cpuacct"):
                os.makedirs(os.path.join(top, h))
            open(os.path.join(top, "cgroup.procs"), "w").close()
            self.assertEqual(leftovers.all_cgroup_roots(top),
                             [top] + [os.path.join(top, h) for h in ("cpuacct", "freezer", "memory")])

    def test_a_dead_runs_directory_and_empty_cgroups_go_others_stay(self):
        with tempfile.TemporaryDirectory() as root, tempfile.TemporaryDirectory() as cg:
            dead = os.path.join(root, "memext-bench-soak-999999999")  # above pid_max: no such process
            os.makedirs(os.path.join(dead, "state"))
            other = os.path.join(root, "memext-dockerd")
            os.makedirs(other)
            os.makedirs(os.path.join(cg, "memext-bench-soak", "c000"))
            os.makedirs(os.path.join(cg, "memext-bench-churn", "c000"))
            said = []
            stuck = leftovers.recover("/nonexistent/memext", say=said.append, root=root, cgroup_roots=(cg,))
            self.assertEqual(stuck, [])
            self.assertFalse(os.path.exists(dead))
            self.assertTrue(os.path.isdir(other))
            self.assertFalse(os.path.exists(os.path.join(cg, "memext-bench-soak")))
            self.assertTrue(os.path.isdir(os.path.join(cg, "memext-bench-churn", "c000")))
            self.assertIn("999999999", said[0])


if __name__ == "__main__":
    unittest.main()
