"""cpuprofile.py's folding of perf samples. Run: python3 -m unittest discover -s bench/peers"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cpuprofile as cp  # noqa: E402

SCRIPT = """\
postgres 101/101 
\t    ffffffff81000001 exc_page_fault+0x10
\t    ffffffff81000002 asm_exc_page_fault+0x2
\t          55550000 PostgresMain

python3 202/202 
\t    ffffffff81000003 shrink_folio_list+0x1
\t    ffffffff81000004 try_to_free_mem_cgroup_pages+0x1
\t    ffffffff81000005 try_charge_memcg+0x1
\t    ffffffff81000006 do_swap_page+0x1
\t    ffffffff81000007 exc_page_fault+0x1

memext-mover 303/304 
\t    ffffffff81000008 swap_read_folio+0x1
\t    ffffffff81000009 swapin_walk_pmd_entry+0x1
\t    ffffffff8100000a madvise_willneed+0x1
\t    ffffffff8100000b do_syscall_64+0x1

memext-reclaim 303/305 
\t    ffffffff81000003 shrink_folio_list+0x1
\t    ffffffff81000004 try_to_free_mem_cgroup_pages+0x1
\t    ffffffff8100000c mem_cgroup_resize_max+0x1
\t    ffffffff8100000b do_syscall_64+0x1

swapper 0/0 
\t    ffffffff8100000d pv_native_safe_halt+0x1
\t    ffffffff8100000e do_idle+0x1

pgbench 404/404 
\t          7f000001 PQexec

kworker/u4:2 55/55 
\t    ffffffff8100000f virtblk_done+0x1
\t    ffffffff81000010 common_interrupt+0x1
\t    ffffffff8100000e do_idle+0x1
"""

CGROUPS = {101: "/memext-peers/crit", 202: "/memext-peers/noise1", 404: "/memext-peers-client", 303: "/"}
ROLES = {"pids": {303: "memext"},
         "cgroups": [("/memext-peers/crit", "critical"), ("/memext-peers", "noise"),
                     ("/memext-peers-client", "client")]}


class Fold(unittest.TestCase):
    def test_samples_are_read_with_their_kernel_frames_leaf_first(self):
        s = cp.parse_script(SCRIPT)
        self.assertEqual(len(s), 7)
        self.assertEqual(s[0], ("postgres", 101, ["exc_page_fault", "asm_exc_page_fault"]))
        self.assertEqual(s[5], ("pgbench", 404, []))
        self.assertEqual(s[6][0], "kworker/u4:2")

    def test_each_sample_is_named_by_its_cause_and_its_party(self):
        p = cp.fold(cp.parse_script(SCRIPT), CGROUPS, ROLES, freq=1)
        self.assertEqual(p["seconds"], {
            "critical": {"page fault": 1},
            # reclaim on the swap-in's charge is reclaim, not the fault
            "noise": {"reclaim: charge": 1},
            "memext": {"read-back (madvise)": 1, "reclaim: limit write": 1},
            "idle": {"idle": 1},
            "client": {"user": 1},
            # an interrupt taken while idle is the interrupt's
            "kernel threads": {"interrupt": 1},
        })
        self.assertEqual(p["leaves"]["memext"], [("swap_read_folio", 1), ("shrink_folio_list", 1)])

    def test_a_process_outside_every_role_is_named_by_its_command(self):
        roles = {"cgroups": []}
        self.assertEqual(cp.who("memext-mover", 9, {}, roles), "memext")
        self.assertEqual(cp.who("kswapd0", 9, {}, roles), "kernel threads")
        self.assertEqual(cp.who("bash", 9, {}, roles), "other")
        # a cgroup that only starts like a role's is not in it
        self.assertEqual(cp.who("x", 9, {9: "/memext-peers-clientele"}, {"cgroups": [("/memext-peers-client", "c")]}),
                         "other")

    def test_what_no_role_holds_is_listed_by_command_and_cgroup(self):
        samples = [("bash", 7, []), ("bash", 7, []), ("sshd", 8, [])]
        p = cp.fold(samples, {8: "/system.slice"}, ROLES, freq=1)
        self.assertEqual(p["seconds"], {"other": {"user": 3}})
        self.assertEqual(p["other"], [("bash (no cgroup seen)", 2), ("sshd (/system.slice)", 1)])

    def test_the_table_has_a_row_per_party_and_a_column_per_cause_seen(self):
        t = cp.table(cp.fold(cp.parse_script(SCRIPT), CGROUPS, ROLES, freq=1)).splitlines()
        self.assertIn("reclaim: charge", t[0])
        self.assertNotIn("push-out", t[0])
        self.assertTrue(t[1].startswith("memext"))  # the busiest first
        self.assertEqual(len(t), 7)


if __name__ == "__main__":
    unittest.main()
