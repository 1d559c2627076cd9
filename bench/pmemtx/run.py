#!/usr/bin/env python3
"""bench/pmemtx: transaction throughput of libscm against PMDK's libpmemobj on
the same tmpfs directory, in rounds that alternate the two, so both see the same
machine. Three pairings, each comparing like with like:

  default   each library's own choice on tmpfs: libscm fences only (tmpfs has no
            persistence domain past memory); libpmemobj msyncs (not pmem)
  flush     both flush cache lines as on real persistent memory
            (SCM_PERSIST_MODE=dax / PMEM_IS_PMEM_FORCE=1)
  msync     both msync (SCM_PERSIST_MODE=msync / libpmemobj's default)

Workloads (txbench.c): update10 (10 random 8-byte updates per transaction) and
alloc (allocate-and-push / pop-and-free per transaction). Prints medians, the
libscm/libpmemobj ratio per pairing, and writes a CSV and a text table."""
import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
from memextbench import log  # noqa: E402

PAIRINGS = {
    "default": ({}, {}),
    "flush": ({"SCM_PERSIST_MODE": "dax"}, {"PMEM_IS_PMEM_FORCE": "1"}),
    "msync": ({"SCM_PERSIST_MODE": "msync"}, {}),
}


def build(out):
    log("building libscm (release) and txbench")
    subprocess.run(["cargo", "build", "--release", "--locked", "-q", "-p", "libscm"], cwd=ROOT, check=True)
    lib = os.path.join(ROOT, "target", "release")
    exe = os.path.join(out, "txbench")
    subprocess.run(
        ["cc", "-O2", "-Wall", "-Wextra", "-Werror", "-I", os.path.join(ROOT, "crates/libscm/include"),
         os.path.join(HERE, "txbench.c"), "-o", exe, f"-L{lib}", "-lscm", "-lpmemobj", f"-Wl,-rpath,{lib}"],
        check=True)
    return exe


def run_one(exe, lib, pool, workload, count, extra_env):
    env = dict(os.environ)
    for k in ("SCM_PERSIST_MODE", "PMEM_IS_PMEM_FORCE"):
        env.pop(k, None)
    env.update(extra_env)
    out = subprocess.run([exe, lib, pool, workload, str(count)], env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    return float(out[4])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5, help="alternating rounds per measurement (default 5)")
    ap.add_argument("--count", type=int, default=100000, help="transactions per run (default 100000)")
    ap.add_argument("--dir", default="/dev/shm", help="where the pool files go (default /dev/shm, tmpfs)")
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "pmemtx-" + time.strftime("%Y%m%d-%H%M%S")))
    ap.add_argument("--quick", action="store_true", help="2 rounds of 20000 transactions (smoke test)")
    a = ap.parse_args()
    if a.quick:
        a.rounds, a.count = 2, 20000
    os.makedirs(a.out, exist_ok=True)
    exe = build(a.out)
    pool_dir = tempfile.mkdtemp(prefix="memext-pmemtx-", dir=a.dir)
    pool = os.path.join(pool_dir, "pool")
    rows = []
    try:
        for pairing, (scm_env, pmdk_env) in PAIRINGS.items():
            for workload in ("update10", "alloc"):
                got = {"libscm": [], "libpmemobj": []}
                for r in range(a.rounds):
                    got["libscm"].append(run_one(exe, "scm", pool, workload, a.count, scm_env))
                    got["libpmemobj"].append(run_one(exe, "pmemobj", pool, workload, a.count, pmdk_env))
                scm, pmdk = statistics.median(got["libscm"]), statistics.median(got["libpmemobj"])
                rows.append({"pairing": pairing, "workload": workload, "libscm_tx_s": round(scm),
                             "libpmemobj_tx_s": round(pmdk), "ratio": round(scm / pmdk, 2)})
                log(f"{pairing:8} {workload:9} libscm {scm:>10,.0f} tx/s  libpmemobj {pmdk:>10,.0f} tx/s  ratio {scm / pmdk:.2f}")
    finally:
        for f in os.listdir(pool_dir):
            os.unlink(os.path.join(pool_dir, f))
        os.rmdir(pool_dir)
    with open(os.path.join(a.out, "pmemtx.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    lines = [f"# bench/pmemtx: {a.rounds} rounds x {a.count} transactions, pools on {a.dir}, medians",
             f"{'pairing':8} {'workload':9} {'libscm tx/s':>12} {'libpmemobj tx/s':>16} {'ratio':>6}"]
    lines += [f"{r['pairing']:8} {r['workload']:9} {r['libscm_tx_s']:>12,} {r['libpmemobj_tx_s']:>16,} {r['ratio']:>6.2f}"
              for r in rows]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(a.out, "pmemtx.txt"), "w") as f:
        f.write(text)
    print(text, end="")
    log(f"results in {a.out}")


if __name__ == "__main__":
    main()
