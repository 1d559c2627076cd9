//! The smoke test of bench/cscm: its --quick profile (tiny sizes, short runs, tmpfs
//! only) must run every configuration and benchmark, write its CSV, plots and
//! parameters, and leave no container, region or broker behind.

use memext_e2e::is_root;
use memext_e2e::sandbox::run_bench_smoke;
use std::path::Path;

#[test]
fn cscm_quick_profile_runs_every_configuration_and_cleans_up() {
    assert!(is_root(), "bench/cscm needs root");
    let scratch = run_bench_smoke("cscm", &["--quick", "--backing", "tmpfs"]);
    let out = &scratch.0;
    let csv = std::fs::read_to_string(out.join("cscm.csv")).expect("cscm.csv");
    for config in [
        "host",
        "container+libscm",
        "container+libscm/no-seccomp",
        "container+volume",
        "container+storage",
        "dram",
    ] {
        for bench in [
            "array",
            "btree",
            "stream",
            "redis-SET",
            "redis-GET",
            "redis-LPUSH",
            "array-tx",
            "btree-tx",
            "syscall",
        ] {
            let row = csv
                .lines()
                .find(|l| l.starts_with(&format!("tmpfs,{config},{bench},")))
                .unwrap_or_else(|| panic!("no row for {config} {bench}:\n{csv}"));
            let value: f64 = row
                .split(',')
                .nth(3)
                .and_then(|v| v.parse().ok())
                .expect("a number");
            assert!(value > 0.0, "{config} {bench} measured nothing: {row}");
        }
    }
    for file in [
        "params.json",
        "summary.txt",
        "cscm-array.png",
        "cscm-redis.png",
        "cscm-btree-tx.png",
    ] {
        assert!(out.join(file).is_file(), "{file} missing");
    }
    let leftovers: Vec<String> = std::fs::read_dir("/dev/shm")
        .expect("/dev/shm")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("memext-cscm-"))
        .collect();
    assert!(
        leftovers.is_empty(),
        "left behind in /dev/shm: {leftovers:?}"
    );
    assert!(
        !Path::new("/sys/fs/cgroup/memory/memext-docker").exists(),
        "the engine's cgroup is left behind"
    );
}
