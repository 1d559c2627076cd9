//! The smoke test of bench/soak: six plain cgroups of bench/peers' noise
//! waking on mixed schedules (one critical) under `memext daemon` for 40 s;
//! the bench samples the daemon, stops it and reads every knob back. Asserts
//! what it reports: wakes happened, the daemon logged no error, every knob is
//! back as it was, and nothing is left behind (swap, cgroups).

use memext_e2e::is_root;
use memext_e2e::sandbox::{daemon_errors, run_bench_smoke};

#[test]
fn soak_smoke_samples_the_daemon_and_leaves_every_knob_as_it_was() {
    assert!(is_root(), "bench/soak needs root");
    let scratch = run_bench_smoke("soak", &["--smoke"]);
    let text = std::fs::read_to_string(scratch.0.join("results.json")).expect("results.json");
    let r: serde_json::Value = serde_json::from_str(&text).expect("json");
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
    for root in ["/sys/fs/cgroup/memory", "/sys/fs/cgroup"] {
        let left = std::path::Path::new(root).join("memext-bench-soak");
        assert!(!left.exists(), "left behind: {}", left.display());
    }
}
