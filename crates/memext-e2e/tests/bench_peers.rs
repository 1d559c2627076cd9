//! The smoke test of bench/peers: two cells (PostgreSQL under burst and grow
//! noise) in five modes on tiny sizes, real containers of a private engine
//! (`split`: the noise in a capped cgroup of its own, one level deeper).
//! Every mode measured the critical database, the capped modes (memext among
//! them) stayed within the cap while `ideal` did not, and nothing is left
//! behind: swap, the parent cgroup, zswap's settings.

use memext_e2e::is_root;
use memext_e2e::sandbox::{assert_cgroup_gone, run_bench_smoke};

const ZSWAP: &str = "/sys/module/zswap/parameters";

fn zswap() -> Vec<String> {
    [
        "enabled",
        "compressor",
        "max_pool_percent",
        "shrinker_enabled",
    ]
    .iter()
    .map(|p| std::fs::read_to_string(format!("{ZSWAP}/{p}")).unwrap_or_default())
    .collect()
}

#[test]
fn peers_smoke_measures_every_mode_and_leaves_nothing_behind() {
    assert!(is_root(), "bench/peers needs root");
    let zswap_before = zswap();
    let scratch = run_bench_smoke(
        "peers",
        &[
            "--smoke",
            "--critical",
            "postgres",
            "--noise",
            "burst,grow",
            "--modes",
            "ideal,linux,zswap,memext,split",
        ],
    );
    assert_eq!(zswap(), zswap_before, "zswap settings not restored");
    let cap_mib = 256.0;
    let csv = std::fs::read_to_string(scratch.0.join("summary.csv")).expect("summary.csv");
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let col = |row: &[&str], name: &str| -> f64 {
        let i = header.iter().position(|h| *h == name).expect(name);
        row[i]
            .parse()
            .unwrap_or_else(|_| panic!("{name} = {:?}", row[i]))
    };
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 10, "2 cells x 5 modes: {csv}");
    for row in &rows {
        let (cell, mode) = (row[0], row[1]);
        assert!(col(row, "requests") > 0.0, "{cell} {mode}: no transactions");
        let dram = col(row, "dram_max_mib");
        if mode == "ideal" {
            assert!(dram > cap_mib, "{cell} ideal: {dram} MiB, not uncapped");
        } else {
            assert!(
                dram <= cap_mib + 1.0,
                "{cell} {mode}: {dram} MiB above the cap"
            );
        }
    }
    assert_cgroup_gone("memext-peers");
}
