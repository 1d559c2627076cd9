//! The smoke test of bench/soak: six plain cgroups of bench/peers' noise
//! waking on mixed schedules (one critical) under `memext daemon` for 40 s;
//! the bench samples the daemon, stops it and reads every knob back. Asserts
//! what it reports: wakes happened, the daemon logged no error, every knob is
//! back as it was, and nothing is left behind (swap, cgroups).

use memext_e2e::is_root;
use memext_e2e::sandbox::{assert_cgroup_gone, bench_results, daemon_errors, run_bench_smoke};

#[test]
fn soak_smoke_samples_the_daemon_and_leaves_every_knob_as_it_was() {
    assert!(is_root(), "bench/soak needs root");
    let scratch = run_bench_smoke("soak", &["--smoke"]);
    let (text, r) = bench_results(&scratch);
    assert!(r["wakes"].as_u64().unwrap_or(0) >= 6, "{text}");
    assert!(
        r["samples"].as_array().is_some_and(|s| s.len() >= 5),
        "{text}"
    );
    assert_eq!(
        r["knobs_left_changed"].as_object().map(|m| m.len()),
        Some(0),
        "{text}"
    );
    assert_eq!(daemon_errors(&r), 0, "{text}");
    assert_cgroup_gone("memext-bench-soak");
}
