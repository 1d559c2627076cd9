//! The README's first command, scripts/demo (demo/firstrun.py on this
//! build): the report's unit tests, and the whole first run on real
//! containers. memext pushes every idle container out to its floor and
//! keeps the critical one resident; a pushed-out container that sleeps is
//! not woken by its own runtime's housekeeping (Python's server loop: before
//! the activity fix each one "woke" within 1.5 s of its push-out and was
//! read back whole); the report, the plot and both wakes are written; and
//! nothing is left behind (swap, cgroups, the engine).

use memext_e2e::docker::{python_unit_tests, repo_root};
use memext_e2e::is_root;
use memext_e2e::sandbox::{assert_cgroup_gone, bench_results, swap_areas, ScratchDir};

const MIB: f64 = 1048576.0;

#[test]
fn demo_report_unit_tests_pass() {
    python_unit_tests("demo");
}

#[test]
fn first_run_pushes_the_idle_containers_out_and_leaves_nothing_behind() {
    assert!(is_root(), "the demo needs root");
    let scratch = ScratchDir::new("demo");
    let swaps_before = swap_areas();
    let out = std::process::Command::new("python3")
        .arg(repo_root().join("demo/firstrun.py"))
        .args(["--profile", "debug", "--out"])
        .arg(&scratch.0)
        .output()
        .expect("run demo/firstrun.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "demo failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(swap_areas(), swaps_before, "demo: swap left behind");
    assert_cgroup_gone("memext-demo");
    assert!(
        !std::path::Path::new("/var/tmp/memext-dockerd-demo").exists(),
        "the demo's engine directory was left behind"
    );
    for part in [
        "DRAM per container",
        "without memext",
        "with memext",
        "total",
    ] {
        assert!(stdout.contains(part), "no {part:?} in: {stdout}");
    }
    let png = std::fs::metadata(scratch.0.join("dram.png")).expect("dram.png");
    assert!(png.len() > 10_000, "dram.png is {} bytes", png.len());

    let (text, r) = bench_results(&scratch);
    // [label, {name: [resident, swapped]}]: started, Linux, memext.
    let snaps = r["snapshots"].as_array().expect("snapshots");
    let memext = &snaps[2][1];
    for (name, v) in memext.as_object().expect("memext snapshot") {
        let resident = v[0].as_f64().expect("resident") / MIB;
        if name == "critical" {
            let started = snaps[0][1][name][0].as_f64().expect("started") / MIB;
            assert!(
                resident > 0.9 * started,
                "critical: {resident:.0} of {started:.0} MiB left"
            );
        } else {
            assert!(
                resident <= 40.0,
                "{name}: {resident:.0} MiB resident, not pushed out to its 16 MiB floor: {text}"
            );
        }
    }
    // Only the container the demo called woke (and only once).
    let idle1 = r["ids"]["idle-1"].as_str().expect("idle-1's id");
    let log = std::fs::read_to_string(scratch.0.join("daemon.log")).expect("daemon.log");
    let woke: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(r#""event":"woke""#))
        .collect();
    assert!(
        woke.len() == 1 && woke[0].contains(idle1),
        "woke events other than idle-1's one wake: {woke:#?}"
    );
    let wakes = r["wakes"].as_array().expect("wakes");
    assert_eq!(wakes.len(), 2, "{text}");
    assert!(wakes.iter().all(|w| w[1]["latency_s"].as_f64() > Some(0.0)));
}
