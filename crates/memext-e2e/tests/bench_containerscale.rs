//! The smoke test of bench/containerscale: --smoke (n up to 3, tiny sizes) runs all
//! three modes with real containers and both critical workloads (Redis, and the
//! nginx -> app -> Redis web application), writes the per-mode CSVs, histograms, plots
//! and density table, and leaves no container, cgroup, swap file or daemon behind.

use memext_e2e::is_root;
use memext_e2e::sandbox::run_bench_smoke;

#[test]
fn containerscale_smoke_runs_all_modes_and_cleans_up() {
    assert!(is_root(), "bench/containerscale needs root");
    let scratch = run_bench_smoke("containerscale", &["--smoke"]);
    let out = &scratch.0;
    for mode in [
        "ideal",
        "linux",
        "memext",
        "ideal-web",
        "linux-web",
        "memext-web",
    ] {
        let csv = std::fs::read_to_string(out.join(format!("{mode}.csv"))).expect("per-mode CSV");
        let mut lines = csv.lines();
        assert_eq!(lines.next(), Some("n,throughput,avg,min,max,p90,p95,p99"));
        let ns: Vec<&str> = lines.map(|l| l.split(',').next().unwrap_or("")).collect();
        assert_eq!(ns, ["1", "3"], "{mode}: steps n = 1, 3");
        for line in csv.lines().skip(1) {
            let throughput: f64 = line
                .split(',')
                .nth(1)
                .and_then(|v| v.parse().ok())
                .expect("throughput");
            assert!(throughput > 0.0, "{mode}: no requests measured: {line}");
        }
        assert!(
            out.join(format!("histograms/{mode}-n3.csv")).is_file(),
            "{mode}: raw histogram"
        );
    }
    for file in [
        "density.txt",
        "params.json",
        "fig1a-throughput.png",
        "fig1d-percentiles.png",
        "web-fig1a-throughput.png",
    ] {
        assert!(out.join(file).is_file(), "{file} missing");
    }
    assert!(
        !std::path::Path::new("/sys/fs/cgroup/memory/memext-cs").exists(),
        "server cgroup left behind"
    );
}
