//! The smoke test of bench/imdt: --smoke (a tiny mesh, up to 2 jobs) runs real
//! OpenFOAM jobs (snappyHexMesh, decomposePar, checkMesh) in containers of a private
//! Docker engine, in the dram setup (cap, no swap) and the extended one (cap, memext's
//! zram and swap-file tiers, `memext daemon`), writes the report's tables, the job
//! records, the summary and the plot, and leaves no container, cgroup, swap device or
//! daemon behind.

use memext_e2e::is_root;
use memext_e2e::sandbox::run_bench_smoke;

const TABLE_HEADER: &str = "containers,avg job runtime [s],throughput [jobs/hour]";

fn rows(csv: &str) -> Vec<Vec<String>> {
    csv.lines()
        .skip(1)
        .map(|l| l.split(',').map(str::to_owned).collect())
        .collect()
}

#[test]
fn imdt_smoke_runs_both_setups_and_cleans_up() {
    assert!(is_root(), "bench/imdt needs root");
    let scratch = run_bench_smoke("imdt", &["--smoke"]);
    let out = &scratch.0;

    let dram = std::fs::read_to_string(out.join("dram.csv")).expect("dram.csv");
    assert_eq!(dram.lines().next(), Some(TABLE_HEADER));
    let dram = rows(&dram);
    assert!(!dram.is_empty(), "one job alone must succeed in DRAM");
    assert_eq!(dram[0][0], "1", "the dram sweep starts with one job");
    let one_job: f64 = dram[0][1].parse().expect("runtime");
    assert!(
        one_job > 0.0,
        "one job alone must succeed in DRAM: {:?}",
        dram[0]
    );

    let extended = std::fs::read_to_string(out.join("extended.csv")).expect("extended.csv");
    assert_eq!(extended.lines().next(), Some(TABLE_HEADER));
    let extended = rows(&extended);
    let ns: Vec<&str> = extended.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(ns, ["1", "2"], "extended sweep: 1 and 2 jobs at once");
    for r in &extended {
        let jobs_per_hour: f64 = r[2].parse().expect("throughput");
        assert!(jobs_per_hour > 0.0, "extended: no job succeeded: {r:?}");
    }

    // Every extended job checked out: exit 0 and a valid mesh with cells.
    let jobs = std::fs::read_to_string(out.join("jobs.csv")).expect("jobs.csv");
    let header: Vec<&str> = jobs.lines().next().expect("header").split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).expect(name);
    let (setup, ok, cells) = (col("setup"), col("ok"), col("cells"));
    let extended_jobs: Vec<Vec<String>> = rows(&jobs)
        .into_iter()
        .filter(|r| r[setup] == "extended")
        .collect();
    assert_eq!(extended_jobs.len(), 3, "1 + 2 extended jobs");
    for j in &extended_jobs {
        assert_eq!(j[ok], "True", "an extended job failed: {j:?}");
        assert!(j[cells].parse::<u64>().expect("cells") > 0, "{j:?}");
    }

    for file in [
        "batches.csv",
        "summary.txt",
        "params.json",
        "jobs-per-hour.png",
    ] {
        assert!(out.join(file).is_file(), "{file} missing");
    }
    assert!(
        !std::path::Path::new("/sys/fs/cgroup/memory/memext-imdt").exists(),
        "server cgroup left behind"
    );
}
