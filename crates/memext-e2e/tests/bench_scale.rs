//! The smoke test of bench/scale: 20 and then 40 idle contexts under `memext
//! daemon`, once with kernel wake events and once polling; for each the bench
//! reports the daemon's CPU and RSS in steady state and times two wakes from
//! its log. Asserts what it reports: every context tracked and pushed out, a
//! CPU and RSS figure, both wakes seen, the wake path each mode uses (usage
//! thresholds on this v1 host), and nothing left behind (swap, cgroups).

use memext_e2e::is_root;
use memext_e2e::sandbox::{assert_cgroup_gone, bench_results, run_bench_smoke};

#[test]
fn scale_smoke_measures_the_daemon_at_each_count() {
    assert!(is_root(), "bench/scale needs root");
    let scratch = run_bench_smoke("scale", &["--smoke"]);
    let (text, r) = bench_results(&scratch);
    let rows = r["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 4, "{text}");
    for row in rows {
        let n = row["contexts"].as_u64().expect("contexts");
        assert_eq!(row["tracked"].as_u64(), Some(n), "{text}");
        assert!(
            row["pushed_out"].as_u64().unwrap_or(0) * 10 >= n * 9,
            "{text}"
        );
        assert!(row["cpu_pct"].as_f64().is_some_and(|c| c > 0.0), "{text}");
        assert!(row["rss_mib"].as_f64().is_some_and(|m| m > 1.0), "{text}");
        assert_eq!(row["wakes_seen"], row["probes"], "{text}");
        let path = match row["observer"].as_str() {
            Some("events") => "threshold",
            _ => "poll",
        };
        assert_eq!(row["wake_paths"], serde_json::json!([path]), "{text}");
    }
    assert_cgroup_gone("memext-bench-scale");
}
