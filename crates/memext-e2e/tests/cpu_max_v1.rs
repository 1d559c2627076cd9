//! The extend class's CPU budget (`cpu_max`), on this host's real v1
//! cgroups: while a critical context runs, an extend context's
//! `cpu.cfs_quota_us` holds its share of the budget and the kernel holds it
//! to it (2 s of spinning get it about 0.4 s of CPU at 0.2 CPU); once the
//! critical context is idle the cap is lifted; SIGTERM puts back what was
//! there.
//! Needs root; everything is removed on drop, also on failure.

use std::time::Duration;

use memext_cgroup::{Limit, LimitKnob, MemoryCgroup as _};
use memext_e2e::toucher::Toucher;
use memext_e2e::{host_hierarchy, sandbox::TierSandbox, status_row, ScratchCgroup};

mod common;
use common::*;

/// A sandbox whose policy selects `cg` critical (idle after 2 s) and
/// `noise` extend with a CPU budget of 0.2.
fn sandbox(cg: &ScratchCgroup, noise: &Sibling, name: &str) -> TierSandbox {
    let classes = "[class.critical]\nidle_after = \"2s\"\n\n[class.extend]\ncpu_max = 0.2";
    critical_and_noise(name, cg, noise, classes)
}

/// An idle process holding 4 MiB in `noise`.
fn idle_in(noise: &Sibling) -> Toucher {
    toucher_in(&noise.h, &noise.path, 4)
}

#[test]
fn an_extend_context_is_held_to_its_cpu_budget_while_a_critical_one_runs() {
    let _g = serial();
    let h = host_hierarchy().expect("hierarchy");
    let cg = ScratchCgroup::new(&h, "critical").expect("cgroup");
    let noise = Sibling::new(&cg, "noise");
    let n = h.open(&noise.path).expect("open");
    let before = n
        .read_limit(LimitKnob::V1CfsQuota)
        .expect("cpu.cfs_quota_us");
    assert_eq!(before, Limit::Max, "a new cgroup has no quota");
    let sb = sandbox(&cg, &noise, "cpumax");
    let mut t = idle_in(&noise);
    let spinner = Spinner::start(&cg);
    let mut daemon = sb.daemon("daemon.log");
    wait_for("memext to cap the noise at 0.2 CPU", 20, || {
        n.read_limit(LimitKnob::V1CfsQuota).ok() == Some(Limit::Bytes(20_000))
    });
    let got = cpu_of(&n, || t.spin(2000).expect("spin"));
    eprintln!("2 s of spinning got {got:?} of CPU under the cap");
    assert!(
        got < Duration::from_millis(800),
        "the kernel held it to 0.2 CPU: {got:?}"
    );

    drop(spinner);
    wait_for(
        "memext to lift the cap once the critical context is idle",
        20,
        || n.read_limit(LimitKnob::V1CfsQuota).ok() == Some(Limit::Max),
    );
    let got = cpu_of(&n, || t.spin(1000).expect("spin"));
    assert!(
        got > Duration::from_millis(700),
        "uncapped, 1 s of spinning got {got:?}"
    );

    let spinner = Spinner::start(&cg);
    wait_for("the cap again", 20, || {
        n.read_limit(LimitKnob::V1CfsQuota).ok() == Some(Limit::Bytes(20_000))
    });
    assert!(daemon.terminate(20).expect("exits").success());
    assert_eq!(
        n.read_limit(LimitKnob::V1CfsQuota)
            .expect("cpu.cfs_quota_us"),
        before,
        "the daemon puts the quota back"
    );
    drop(spinner);
    drop(t);
}

/// A context whose owner set a quota of its own (0.1 CPU, as `docker run
/// --cpus 0.1` does) keeps it: memext's cap (0.2) never loosens it, and
/// lifting the cap does not take it away.
#[test]
fn an_owners_own_cpu_quota_is_never_loosened() {
    let _g = serial();
    let h = host_hierarchy().expect("hierarchy");
    let cg = ScratchCgroup::new(&h, "critical").expect("cgroup");
    let noise = Sibling::new(&cg, "noise");
    let n = h.open(&noise.path).expect("open");
    let own = Limit::Bytes(10_000);
    n.write_limit(LimitKnob::V1CfsQuota, own)
        .expect("the owner's quota");
    let sb = sandbox(&cg, &noise, "cpumax-own");
    let t = idle_in(&noise);
    let spinner = Spinner::start(&cg);
    let mut daemon = sb.daemon("daemon.log");
    wait_for("the daemon to track the noise", 20, || {
        let out = sb.run(&["status", "--json"]);
        status_row(&String::from_utf8_lossy(&out.stdout), noise.path.as_str()).is_ok()
    });
    let quota = || {
        n.read_limit(LimitKnob::V1CfsQuota)
            .expect("cpu.cfs_quota_us")
    };
    for _ in 0..10 {
        std::thread::sleep(Duration::from_millis(300)); // 15 ticks in all
        assert_eq!(
            quota(),
            own,
            "capped at 0.2 while the critical context runs"
        );
    }
    drop(spinner);
    for _ in 0..20 {
        std::thread::sleep(Duration::from_millis(300)); // its idle_after and more
        assert_eq!(
            quota(),
            own,
            "the cap lifted once the critical context is idle"
        );
    }
    assert!(daemon.terminate(20).expect("exits").success());
    assert_eq!(quota(), own);
    drop(t);
}
