//! The daemon's background moves in a cpu cgroup of their own, on this
//! host's real v1 cgroups: a thread of this process at the background
//! priority spins on the CPU a context's task spins on. At nice 19 alone,
//! it weighs within this process's group (its cpu cgroup, or its session's
//! autogroup), which the kernel weighs against the context's cgroup as a
//! nice-0 task's: about half the CPU. In the group, it weighs what nice 19
//! means: about 1.5%. Needs root; a few seconds; everything is removed on
//! drop, also on failure.

use std::sync::Arc;
use std::time::{Duration, Instant};

use memext::daemon::priority::{MoveGroup, MovePriorities};
use memext_cgroup::{GroupWeight, ThreadGroup};
use memext_e2e::sandbox::TierSandbox;
use memext_e2e::toucher::Toucher;
use memext_e2e::{events_named, host_hierarchy, ScratchCgroup};
use memext_sys::sched::Priority;

mod common;
use common::*;

fn pin_to_cpu0(pid: i32) {
    let mut cpus = rustix::thread::CpuSet::new();
    cpus.set(0);
    let pid = rustix::process::Pid::from_raw(pid).expect("pid");
    rustix::thread::sched_setaffinity(Some(pid), &cpus).expect("pin to CPU 0");
}

/// The calling thread's CPU time so far (schedstat's first field, ns).
fn thread_cpu() -> Duration {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").expect("schedstat");
    let ns: u64 = s
        .split_whitespace()
        .next()
        .and_then(|f| f.parse().ok())
        .expect("ns");
    Duration::from_nanos(ns)
}

/// The cpu cgroup of thread `tid` of this process.
fn cpu_cgroup_of_thread(tid: i32) -> String {
    let text = std::fs::read_to_string(format!("/proc/self/task/{tid}/cgroup")).expect("cgroup");
    memext_cgroup::threads::cpu_cgroup_of(&text)
        .expect("a v1 cpu hierarchy")
        .to_string()
}

/// The CPU a thread at `priorities.background` got over `wall` of spinning
/// on CPU 0, beside `t` spinning there too, and the thread's cpu cgroup
/// once back at nice 0.
fn background_share(priorities: MovePriorities, t: &mut Toucher, wall: Duration) -> (f64, String) {
    let spinner = std::thread::spawn(move || {
        let tid = memext_sys::sched::thread_id();
        pin_to_cpu0(tid);
        let mut said = false;
        priorities.run_next_at(priorities.background, "test", &mut said);
        assert!(!said, "the priority was refused");
        let (t0, c0) = (Instant::now(), thread_cpu());
        while t0.elapsed() < wall {
            std::hint::spin_loop();
        }
        let share = (thread_cpu() - c0).as_secs_f64() / wall.as_secs_f64();
        // Back at the daemon's priority, the thread leaves the group.
        priorities.apply(tid, Priority::Nice(0)).expect("home");
        (share, cpu_cgroup_of_thread(tid))
    });
    let ms = u64::try_from(wall.as_millis()).expect("ms") + 300;
    t.spin(ms).expect("the context's spin");
    spinner.join().expect("spinner")
}

#[test]
fn a_background_move_in_its_group_takes_little_cpu_from_a_context() {
    let _g = serial();
    let h = host_hierarchy().expect("hierarchy");
    let cpu_root = h.cpu_root.clone().expect("a v1 cpu hierarchy");
    let cg = ScratchCgroup::new(&h, "busy").expect("cgroup");
    let mut t = toucher_in(&h, &cg.path, 4);
    pin_to_cpu0(i32::try_from(t.pid()).expect("pid"));
    let name = format!("memext-e2e-{}-moves", std::process::id());
    let threads = ThreadGroup::create(&cpu_root, &name, GroupWeight::of_nice(19)).expect("group");
    let group = Arc::new(MoveGroup::new(threads));
    assert!(group.switch(true).expect("on"), "a new group is off");
    let dir = group.dir().to_path_buf();
    let in_group = || std::fs::read_to_string(dir.join("tasks")).expect("tasks");
    let wall = Duration::from_millis(1500);
    let (alone, _) = background_share(MovePriorities::default(), &mut t, wall);
    let (grouped, home) = background_share(
        MovePriorities::default().in_group(Some(group.clone())),
        &mut t,
        wall,
    );
    eprintln!(
        "a nice-19 thread beside a context's spinning task: {:.1}% of the CPU alone, {:.1}% in its group",
        alone * 100.0,
        grouped * 100.0
    );
    assert!(
        grouped < 0.08,
        "in its group at cpu.shares 15, the thread took {:.1}% of the CPU",
        grouped * 100.0
    );
    assert!(
        in_group().trim().is_empty(),
        "a thread back at nice 0 is still in the group"
    );
    assert_eq!(
        home,
        cpu_cgroup_of_thread(memext_sys::sched::thread_id()),
        "back at nice 0, the thread is where this process's other threads are"
    );
    drop(group);
    assert!(
        !dir.exists(),
        "the group was not removed: {}",
        dir.display()
    );
}

/// A sandbox whose policy selects `cg` critical and `noise` extend (both
/// idle after 2 s), a swap file of 128 MiB behind them, `move_group` on.
fn sandbox(cg: &ScratchCgroup, noise: &Sibling) -> TierSandbox {
    let classes = "[class.critical]\nidle_after = \"2s\"\n\n[class.extend]\nidle_after = \"2s\"\nfloor = \"4MiB\"\n\n\
         [[tiers.swapfile]]\npath = \"@DIR@/swap0\"\nsize = \"128MiB\"\npriority = 10\n";
    critical_and_noise_with(
        "movegroup",
        cg,
        noise,
        classes,
        "poll = \"20ms\"\nmove_group = true",
    )
}

/// The daemon with `move_group`: its group appears at nice 19's weight;
/// while a critical context runs the idle noise's push-out runs in it;
/// once none runs its threads go home and the noise's next push-out runs
/// at home; SIGTERM removes the group.
#[test]
fn the_daemon_runs_its_push_outs_in_its_group_while_a_critical_context_runs() {
    let _g = serial();
    let h = host_hierarchy().expect("hierarchy");
    let dir = h
        .cpu_root
        .clone()
        .expect("a v1 cpu hierarchy")
        .join(memext::daemon::priority::GROUP_NAME);
    assert!(
        !dir.exists(),
        "{} is there before the daemon",
        dir.display()
    );
    let cg = ScratchCgroup::new(&h, "movegroup").expect("cgroup");
    let noise = Sibling::new(&cg, "noise");
    let sb = sandbox(&cg, &noise);
    sb.up();
    let mut t = toucher_in(&h, &noise.path, 32);
    let spinner = Spinner::start(&cg);
    let log = sb.dir.join("daemon.log");
    let mut daemon = sb.daemon("daemon.log");
    let pushed_out = |t: &Toucher| {
        let (res, total) = mapped(t);
        res * 5 <= total
    };
    wait_for("the daemon's moves' group", 20, || dir.is_dir());
    assert_eq!(
        std::fs::read_to_string(dir.join("cpu.shares"))
            .expect("shares")
            .trim(),
        "15"
    );
    // The mover stays in the group after its push-out until its next job.
    let tasks = || std::fs::read_to_string(dir.join("tasks")).unwrap_or_default();
    wait_for("the push-out", 30, || pushed_out(&t));
    wait_for("a move in the group", 10, || !tasks().trim().is_empty());

    drop(spinner);
    let switched = |on: bool| {
        events_named(&log, "move-group")
            .iter()
            .filter(|e| e["on"] == on)
            .count()
    };
    wait_for("the group switched off", 30, || switched(false) > 0);
    assert!(tasks().trim().is_empty(), "off, threads left: {}", tasks());
    // The noise wakes, rests and is pushed out again: at home now.
    t.touch().expect("touch");
    wait_for("the noise back in DRAM", 20, || !pushed_out(&t));
    wait_for("the second push-out", 30, || pushed_out(&t));
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        tasks().trim().is_empty(),
        "a push-out joined the group while no critical context ran: {}",
        tasks()
    );
    assert_eq!(
        switched(true),
        1,
        "switched on once, before the first push-out"
    );
    assert!(daemon.terminate(20).expect("exits").success());
    assert!(!dir.exists(), "the group is left after SIGTERM");
    drop(t);
}
