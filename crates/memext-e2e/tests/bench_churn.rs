//! The smoke test of bench/churn: 12 real Docker containers of a private
//! engine created, run, stopped and removed under `memext daemon` (some
//! critical, most extend, a swap-file tier behind them); afterwards the daemon
//! tracks nothing, owns no knob, holds the fds it started with, logged no
//! error, and nothing is left behind (swap, cgroups, containers).

use memext_e2e::is_root;
use memext_e2e::sandbox::{assert_cgroup_gone, bench_results, daemon_errors, run_bench_smoke};

#[test]
fn churn_smoke_leaves_the_daemon_as_it_found_it() {
    assert!(is_root(), "bench/churn needs root");
    let scratch = run_bench_smoke("churn", &["--smoke"]);
    let (text, r) = bench_results(&scratch);
    assert_eq!(r["cycles_failed"], 0, "{text}");
    for k in ["tracked", "ledger", "fds"] {
        assert_eq!(r["after"][k], r["before"][k], "{k}: {text}");
    }
    assert_eq!(daemon_errors(&r), 0, "{text}");
    assert_cgroup_gone("memext-bench-churn");
}
