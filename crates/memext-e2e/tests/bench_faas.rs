//! bench/faas: the pieces' unit tests (the invocation trace generator, the
//! function, the results' figures), and the smoke run of the whole host:
//! six function containers of a private engine replaying a 20 s trace in
//! ideal, senpai (the cap and the tier, and Senpai on every function) and
//! memext, on both tiers. Every call is answered (under Senpai, all but
//! those to a function its limits OOM-killed), the
//! capped modes stay within the cap while ideal does not, and nothing is
//! left behind (swap, the parent cgroup).

use memext_e2e::docker::python_unit_tests;
use memext_e2e::is_root;
use memext_e2e::sandbox::{assert_cgroup_gone, bench_results, run_bench_smoke};

#[test]
fn faas_unit_tests_pass() {
    python_unit_tests("bench/faas");
}

#[test]
fn faas_smoke_answers_every_call_within_the_cap_and_leaves_nothing_behind() {
    assert!(is_root(), "bench/faas needs root");
    let scratch = run_bench_smoke(
        "faas",
        &[
            "--smoke",
            "--tiers",
            "swapfile,zram",
            "--modes",
            "ideal,senpai,memext",
        ],
    );
    let (text, results) = bench_results(&scratch);
    let rows = results["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 5, "ideal + 2 tiers x (senpai, memext): {text}");
    for r in rows {
        let (mode, tier) = (r["mode"].as_str().expect("mode"), &r["tier"]);
        assert!(
            r["calls"].as_u64().expect("calls") > 0,
            "{mode} {tier}: no call"
        );
        // Senpai's own per-function limits (16 MiB at the least) now and
        // then OOM-kill a function, and calls to it fail: a result of the
        // peer, recorded as such. memext and ideal must answer every call.
        let killed = r["oom_kills"].as_u64().unwrap_or(0) > 0;
        assert!(
            r["errors"] == 0 || (mode == "senpai" && killed),
            "{mode} {tier}: calls failed: {text}"
        );
        let (dram, cap) = (
            r["dram_max_mib"].as_f64().expect("dram"),
            r["cap_mib"].as_f64().expect("cap"),
        );
        if mode == "ideal" {
            assert!(dram > cap, "ideal: {dram} MiB, not above the {cap} MiB cap");
        } else {
            assert!(dram <= cap + 1.0, "{mode} {tier}: {dram} MiB above the cap");
            assert!(
                r["cold_limit_p99_ms"].as_f64().is_some_and(|l| l > 0.0),
                "{mode} {tier}: no cold-call limit"
            );
        }
    }
    assert!(scratch.0.join("summary.md").exists());
    assert_cgroup_gone("memext-faas");
}
