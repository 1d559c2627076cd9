//! The smoke test of bench/soak: six plain cgroups of bench/peers' noise
//! waking on mixed schedules (one critical) under `memext daemon` for 40 s;
//! the bench samples the daemon, stops it and reads every knob back. Asserts
//! what it reports: wakes happened, the daemon logged no error, every knob is
//! back as it was, and nothing is left behind (swap, cgroups). And a soak run
//! killed outright is undone by bench/leftovers.py.

mod common;
use common::serial;
use memext_e2e::sandbox::{
    assert_cgroup_gone, bench_results, daemon_errors, run_bench_smoke, run_ok, swap_areas,
};

#[test]
fn leftovers_unit_tests() {
    memext_e2e::docker::python_unit_tests("bench");
}

#[test]
fn soak_smoke_samples_the_daemon_and_leaves_every_knob_as_it_was() {
    let _machine = serial();
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

/// A soak run killed outright (SIGKILL to its whole process group: no clean-up
/// ran) leaves its swap file active, its daemon's knobs written and its
/// cgroups; bench/leftovers.py (which scripts/test and every bench run first)
/// finds the dead run by its work directory and undoes all of it.
#[test]
fn a_killed_runs_swap_and_cgroups_are_undone_by_the_next() {
    use std::os::unix::process::CommandExt;
    use std::time::{Duration, Instant};
    let _machine = serial();
    let root = memext_e2e::docker::repo_root();
    let out = memext_e2e::sandbox::ScratchDir::new("soak-killed");
    let mut run = std::process::Command::new("python3")
        .arg(root.join("bench/soak/run.py"))
        .args(["--smoke", "--profile", "debug", "--out"])
        .arg(&out.0)
        .stdout(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .expect("start bench/soak");
    let work = format!("/var/tmp/memext-bench-soak-{}", run.id());
    let group = rustix::process::Pid::from_raw(i32::try_from(run.id()).expect("pid")).expect("pid");
    let kill = |run: &mut std::process::Child| {
        rustix::process::kill_process_group(group, rustix::process::Signal::KILL).ok();
        run.wait().ok();
    };
    // Up: its swap file active and the daemon has limited a noise context.
    let journal = format!("{work}/state/daemon.journal");
    let deadline = Instant::now() + Duration::from_secs(90);
    while !(swap_areas().iter().any(|a| a.starts_with(&work))
        && std::fs::read_to_string(&journal).is_ok_and(|j| j.contains("V1Limit")))
    {
        if Instant::now() > deadline || run.try_wait().ok().flatten().is_some() {
            kill(&mut run);
            panic!("bench/soak never had its swap on and a limit set");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    kill(&mut run);
    std::thread::sleep(Duration::from_millis(500)); // the group's processes gone
    assert!(
        swap_areas().iter().any(|a| a.starts_with(&work)),
        "the killed run cleaned up"
    );

    let said = run_ok(
        std::process::Command::new("python3")
            .arg(root.join("bench/leftovers.py"))
            .arg("--memext")
            .arg(root.join("target/debug/memext")),
    );
    assert!(
        said.contains(&format!("run {} of bench/soak", run.id())),
        "{said}"
    );
    assert!(!swap_areas().iter().any(|a| a.starts_with(&work)), "{said}");
    assert!(!std::path::Path::new(&work).exists(), "{said}");
    assert_cgroup_gone("memext-bench-soak");
}
