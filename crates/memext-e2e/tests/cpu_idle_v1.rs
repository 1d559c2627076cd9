//! The extend class as an idle CPU group (`cpu_idle`), on this host's real
//! v1 cgroups: the daemon sets the context's `cpu.idle`, and the kernel then
//! gives it almost no CPU a critical task wants (both spinning on one CPU)
//! and all the CPU no one else wants (unlike
//! `cpu_max`); no CPU weight is written for it; SIGTERM puts `cpu.idle`
//! back. Needs root; everything is removed on drop, also on failure.

use std::time::Duration;

use memext_cgroup::{Limit, LimitKnob, MemoryCgroup as _};
use memext_e2e::toucher::Toucher;
use memext_e2e::{host_hierarchy, ScratchCgroup};

mod common;
use common::*;

/// A toucher holding 4 MiB in cgroup `path` of `h`, pinned to CPU 0.
fn pinned_in(h: &memext_cgroup::Hierarchy, path: &memext_cgroup::CgroupPath) -> Toucher {
    let t = toucher_in(h, path, 4);
    let mut cpus = rustix::thread::CpuSet::new();
    cpus.set(0);
    let pid = rustix::process::Pid::from_raw(i32::try_from(t.pid()).expect("pid"));
    rustix::thread::sched_setaffinity(pid, &cpus).expect("pin to CPU 0");
    t
}

#[test]
fn an_idle_cpu_extend_context_takes_only_the_cpu_no_critical_task_wants() {
    let _g = serial();
    let h = host_hierarchy().expect("hierarchy");
    let cg = ScratchCgroup::new(&h, "critical").expect("cgroup");
    let noise = Sibling::new(&cg, "noise");
    let n = h.open(&noise.path).expect("open");
    assert_eq!(
        n.read_limit(LimitKnob::V1CpuIdle).expect("cpu.idle"),
        Limit::Bytes(0),
        "a new cgroup is not idle"
    );
    let sb = critical_and_noise("cpuidle", &cg, &noise, "[class.extend]\ncpu_idle = true");
    let mut t = pinned_in(&h, &noise.path);
    let mut daemon = sb.daemon("daemon.log");
    wait_for("memext to make the noise an idle CPU group", 20, || {
        n.read_limit(LimitKnob::V1CpuIdle).ok() == Some(Limit::Bytes(1))
    });
    // Alone on its CPU, it gets all of it: nothing caps it.
    let alone = cpu_of(&n, || t.spin(1000).expect("spin"));
    eprintln!("alone, 1 s of spinning got {alone:?}");
    assert!(alone > Duration::from_millis(700), "{alone:?}");

    // A critical task spinning on the same CPU takes it all.
    let mut crit = pinned_in(&h, &cg.path);
    let spin = std::thread::spawn(move || {
        crit.spin(3000).expect("critical spin");
        crit
    });
    std::thread::sleep(Duration::from_millis(200));
    let shared = cpu_of(&n, || t.spin(2000).expect("spin"));
    let crit = spin.join().expect("critical spinner");
    eprintln!("beside a critical spinner, 2 s of spinning got {shared:?}");
    // At equal weights the kernel would split the CPU between them. (An
    // idle group's weight, 3, is close to memext's default low weight for
    // extend, v1 shares 10, so this bound does not tell the two apart:
    // what sets an idle group apart is that a waking critical task
    // preempts it at once, which bench/peers measures.)
    assert!(shared < Duration::from_millis(60), "{shared:?}");

    // Its weight was never written: the shares the kernel restores on
    // leaving the idle group are the runtime's own.
    assert!(daemon.terminate(20).expect("exits").success());
    assert_eq!(
        n.read_limit(LimitKnob::V1CpuIdle).expect("cpu.idle"),
        Limit::Bytes(0),
        "the daemon puts cpu.idle back"
    );
    assert_eq!(
        n.read_limit(LimitKnob::V1CpuShares).expect("cpu.shares"),
        Limit::Bytes(1024)
    );
    drop(crit);
    drop(t);
}
