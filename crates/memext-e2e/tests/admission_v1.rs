//! Admission end to end on this host's real cgroups (v1): a server (a parent
//! cgroup with a hard limit) holds a critical context whose working set is
//! page cache (a file it re-reads) and three idle extend contexts; the three
//! wake at the same moment, and their working sets together do not fit. The
//! daemon lets them in one after another (the rest frozen in the v1 freezer),
//! every wake completes, the critical context's page cache stays resident
//! throughout, and nothing stays frozen after SIGTERM. A second test gives
//! two waking contexts room enough for both and `wakes_at_once = 1`: the
//! second still waits its turn. A third runs two batch jobs in turn by
//! their peaks (`admit_at_peak`). Needs root; everything is removed on
//! drop, also on failure.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use memext_cgroup::{CgroupPath, Hierarchy, Limit, LimitKnob, MemoryCgroup};
use memext_e2e::sandbox::{ChildGuard, TierSandbox};
use memext_e2e::toucher::Toucher;
use memext_e2e::{events_named, host_hierarchy, ScratchCgroup};
use memext_engine::context::START_GRACE;

mod common;
use common::*;

const MIB: u64 = 1 << 20;

/// Cgroups beside a scratch cgroup, under its parent: thawed and removed on
/// drop (before the parent, which the scratch cgroup removes).
struct Siblings {
    h: Hierarchy,
    paths: Vec<CgroupPath>,
}

impl Siblings {
    fn new(h: &Hierarchy, parent: &CgroupPath, names: &[&str]) -> Self {
        let paths: Vec<CgroupPath> = names
            .iter()
            .map(|n| parent.child(n).expect("name"))
            .collect();
        for p in &paths {
            h.create(p).expect("create sibling cgroup");
        }
        Self {
            h: h.clone(),
            paths,
        }
    }
}

impl Drop for Siblings {
    fn drop(&mut self) {
        for p in &self.paths {
            // A task frozen by a daemon that died cannot exit: thaw first.
            if let Ok(c) = self.h.open(p) {
                c.write_limit(LimitKnob::V1Freezer, Limit::Bytes(0)).ok();
            }
        }
        for p in &self.paths {
            for _ in 0..50 {
                if self.h.remove(p).is_ok() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
}

/// A shell in its own process group that writes a file (its pages charged to
/// the cgroup it was moved into before it starts) and then re-reads it
/// forever: a working set of page cache. Killed, group and all, on drop.
struct CacheReader(Child);

impl CacheReader {
    fn start(file: &std::path::Path, mib: u64, into: &ScratchCgroup) -> Self {
        let script = format!(
            "read go; dd if=/dev/urandom of={f} bs=1M count={mib} status=none; \
             echo written; while :; do cat {f} >/dev/null; sleep 0.2; done",
            f = file.display()
        );
        let mut child = Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("start the reader");
        into.attach(child.id()).expect("attach the reader");
        let mut stdin = child.stdin.take().expect("stdin");
        writeln!(stdin, "go").expect("start it");
        let mut out = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        std::io::BufRead::read_line(&mut out, &mut line).expect("written");
        assert_eq!(line.trim(), "written");
        Self(child)
    }
}

impl Drop for CacheReader {
    fn drop(&mut self) {
        // Our own child's process group, by its pid.
        if let Some(pid) = i32::try_from(self.0.id())
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        {
            rustix::process::kill_process_group(pid, rustix::process::Signal::KILL).ok();
        }
        self.0.wait().ok();
    }
}

/// An 80 MiB toucher in each noise cgroup, its heap allocated, and the
/// server (their parent) capped at `cap_mib`.
fn noise_in(h: &Hierarchy, noise: &Siblings, cap_mib: u64) -> Vec<Toucher> {
    let mut touchers: Vec<Toucher> = Vec::new();
    for path in &noise.paths {
        let mut t = Toucher::spawn(helper(), 80 << 20).expect("toucher");
        h.attach(path, t.pid()).expect("attach");
        t.alloc().expect("alloc");
        touchers.push(t);
    }
    let parent = noise.paths[0].parent().expect("the server");
    h.open(&parent)
        .expect("parent")
        .write_limit(LimitKnob::V1Limit, Limit::Bytes(cap_mib * MIB))
        .expect("server cap");
    touchers
}

/// Waits until the daemon has pushed every toucher out (a quarter or less
/// of its heap resident).
fn wait_pushed_out(touchers: &[Toucher]) {
    wait_for("the noise to be pushed out", 60, || {
        touchers.iter().all(|t| {
            let (res, total) = mapped(t);
            res * 4 <= total
        })
    });
}

/// Every wake the daemon froze is thawed within 10 s. (A wake the daemon
/// saw only at a tick, by its CPU, may be frozen after its touch is done;
/// it is thawed within a few ticks all the same.)
fn assert_all_thawed(log: &std::path::Path, frozen: &[serde_json::Value]) {
    let all_thawed = || {
        let thawed = events_named(log, "thawed");
        frozen
            .iter()
            .all(|f| thawed.iter().any(|t| t["context"] == f["context"]))
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while !all_thawed() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let thawed = events_named(log, "thawed");
    for f in frozen {
        assert!(
            thawed.iter().any(|t| t["context"] == f["context"]),
            "{} never thawed:\n{}",
            f["context"],
            std::fs::read_to_string(log).unwrap_or_default()
        );
    }
}

/// The daemon exits on SIGTERM and leaves no noise cgroup frozen.
fn stop_leaves_none_frozen(daemon: &mut ChildGuard, h: &Hierarchy, noise: &Siblings) {
    assert!(daemon.terminate(20).expect("exits").success());
    for path in &noise.paths {
        let c = h.open(path).expect("open");
        assert_eq!(
            c.read_limit(LimitKnob::V1Freezer).expect("freezer"),
            Limit::Bytes(0),
            "{path} left frozen"
        );
    }
}

#[test]
fn noise_waking_in_a_burst_is_admitted_in_turn_and_the_critical_page_cache_stays() {
    let _g = serial();
    let h = host_hierarchy().expect("hierarchy");
    let db = ScratchCgroup::new(&h, "db").expect("cgroup");
    let noise = Siblings::new(&h, &db.parent, &["n0", "n1", "n2"]);
    let p = &db.parent;
    let toml = format!(
        "[[select]]\ncgroup = \"{p}/db\"\nclass = \"critical\"\n\n\
         [[select]]\ncgroup = \"{p}/n*\"\nclass = \"extend\"\n\n\
         [class.extend]\nidle_after = \"2s\"\nfloor = \"16MiB\"\nadmit_within = \"30s\"\n\n\
         [daemon]\ncapacity_cgroup = \"{p}\"\ntick = \"500ms\"\npoll = \"20ms\"\nsocket = \"@DIR@/memext.sock\"\n\n\
         [[tiers.swapfile]]\npath = \"@DIR@/swap0\"\nsize = \"1GiB\"\npriority = 10\n"
    );
    let sb = TierSandbox::new("admission", &toml);
    sb.up();
    let reader = CacheReader::start(&sb.dir.join("table"), 64, &db);
    let dbc = db.open().expect("open");
    // The server: 320 MiB. The critical context's ~70 MiB with headroom and
    // three floors leave ~200 MiB: two of the 112 MiB wakes (80 MiB working
    // set and growth room) fit together, not three.
    let touchers = noise_in(&h, &noise, 320);
    let log = sb.dir.join("daemon.log");
    let mut daemon = sb.daemon("daemon.log");
    wait_pushed_out(&touchers);
    let cache = || dbc.memory().expect("memory").file_bytes;
    wait_for("the table in the page cache", 10, || cache() >= 60 * MIB);
    let before = cache();

    // All three wake at once: a little CPU, then the whole heap.
    let (tx, rx) = mpsc::channel();
    let t0 = Instant::now();
    let threads: Vec<_> = touchers
        .into_iter()
        .enumerate()
        .map(|(i, mut t)| {
            let tx = tx.clone();
            std::thread::spawn(move || {
                t.spin(100).expect("spin");
                let r = t.touch().expect("touch");
                tx.send((i, t0.elapsed(), r.major_faults)).ok();
                t
            })
        })
        .collect();
    let mut done = Vec::new();
    let mut least = before;
    while done.len() < 3 && t0.elapsed() < Duration::from_secs(60) {
        least = least.min(cache());
        if let Ok(d) = rx.recv_timeout(Duration::from_millis(100)) {
            done.push(d);
        }
    }
    let log_text = || std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(done.len(), 3, "wakes done: {done:?}\n{}", log_text());
    let touchers: Vec<Toucher> = threads
        .into_iter()
        .map(|t| t.join().expect("thread"))
        .collect();
    let frozen = events_named(&log, "frozen");
    assert!(!frozen.is_empty(), "no wake waited:\n{}", log_text());
    assert_all_thawed(&log, &frozen);
    assert!(
        least * 10 >= before * 9,
        "the critical context's page cache fell from {before} to {least} bytes during the burst"
    );
    eprintln!(
        "wakes done (context, after, major faults): {done:?}; {} frozen; page cache {} -> least {} MiB",
        frozen.len(),
        before / MIB,
        least / MIB
    );

    stop_leaves_none_frozen(&mut daemon, &h, &noise);
    drop(touchers);
    drop(reader);
}

/// `wakes_at_once = 1`: two noise contexts wake at once beside a critical
/// context that runs (re-reading its table), with room for both; the second
/// waits frozen until the first rests, both wakes complete, and none is left
/// frozen. (Without the setting neither waits: room for both.)
#[test]
fn with_one_wake_at_once_the_second_of_two_that_fit_waits_its_turn() {
    let _g = serial();
    let h = host_hierarchy().expect("hierarchy");
    let db = ScratchCgroup::new(&h, "db").expect("cgroup");
    let noise = Siblings::new(&h, &db.parent, &["n0", "n1"]);
    let p = &db.parent;
    let toml = format!(
        "[[select]]\ncgroup = \"{p}/db\"\nclass = \"critical\"\n\n\
         [[select]]\ncgroup = \"{p}/n*\"\nclass = \"extend\"\n\n\
         [class.extend]\nidle_after = \"2s\"\nfloor = \"16MiB\"\nadmit_within = \"30s\"\nwakes_at_once = 1\n\n\
         [daemon]\ncapacity_cgroup = \"{p}\"\ntick = \"500ms\"\npoll = \"20ms\"\nsocket = \"@DIR@/memext.sock\"\n\n\
         [[tiers.swapfile]]\npath = \"@DIR@/swap0\"\nsize = \"1GiB\"\npriority = 10\n"
    );
    let sb = TierSandbox::new("at-once", &toml);
    sb.up();
    let reader = CacheReader::start(&sb.dir.join("table"), 64, &db);
    // 512 MiB: the critical context's ~70 MiB with headroom leave room for
    // both 112 MiB wakes (80 MiB working set and growth room).
    let touchers = noise_in(&h, &noise, 512);
    let log = sb.dir.join("daemon.log");
    let mut daemon = sb.daemon("daemon.log");
    wait_pushed_out(&touchers);
    let t0 = Instant::now();
    let threads: Vec<_> = touchers
        .into_iter()
        .map(|mut t| {
            std::thread::spawn(move || {
                t.spin(100).expect("spin");
                t.touch().expect("touch");
                (t, t0.elapsed())
            })
        })
        .collect();
    let done: Vec<(Toucher, Duration)> = threads
        .into_iter()
        .map(|t| t.join().expect("thread"))
        .collect();
    let log_text = || std::fs::read_to_string(&log).unwrap_or_default();
    let frozen = events_named(&log, "frozen");
    assert!(
        !frozen.is_empty(),
        "the second wake did not wait:\n{}",
        log_text()
    );
    assert_all_thawed(&log, &frozen);
    let after: Vec<Duration> = done.iter().map(|(_, d)| *d).collect();
    eprintln!("wakes done after {after:?}; {} frozen", frozen.len());
    stop_leaves_none_frozen(&mut daemon, &h, &noise);
    drop(done);
    drop(reader);
}

/// Whether the daemon's log has a `name` event for context path `p`.
fn has_event(log: &std::path::Path, name: &str, p: &CgroupPath) -> bool {
    events_named(log, name)
        .iter()
        .any(|e| e["context"].as_str() == Some(p.as_str()))
}

/// `admit_at_peak`: two batch jobs of 300 MiB in a 512 MiB server
/// (480 MiB beyond the two floors). The first holds its heap and works on
/// it; the second, allocating its own, no longer fits beside it and waits
/// frozen (out of its turn). The first ends its job and, 2 s later,
/// starts again (an onset): it queues behind the second, which is let in,
/// and waits for room for its 300 MiB peak. The daemon leaves none frozen
/// at SIGTERM.
#[test]
fn batch_jobs_run_in_turn_each_with_room_for_its_peak() {
    let _g = serial();
    let h = host_hierarchy().expect("hierarchy");
    let base = ScratchCgroup::new(&h, "base").expect("cgroup");
    let jobs = Siblings::new(&h, &base.parent, &["j0", "j1"]);
    let p = &base.parent;
    let toml = format!(
        "[[select]]\ncgroup = \"{p}/j*\"\nclass = \"extend\"\n\n\
         [class.extend]\nidle_after = \"60s\"\nfloor = \"16MiB\"\nadmit_within = \"60s\"\nadmit_at_peak = true\n\n\
         [daemon]\ncapacity_cgroup = \"{p}\"\ntick = \"500ms\"\npoll = \"20ms\"\nsocket = \"@DIR@/memext.sock\"\n\n\
         [[tiers.swapfile]]\npath = \"@DIR@/swap0\"\nsize = \"1GiB\"\npriority = 10\n"
    );
    let sb = TierSandbox::new("at-peak", &toml);
    sb.up();
    let mut touchers: Vec<Toucher> = Vec::new();
    for path in &jobs.paths {
        let t = Toucher::spawn(helper(), 300 << 20).expect("toucher");
        h.attach(path, t.pid()).expect("attach");
        touchers.push(t);
    }
    h.open(p)
        .expect("server")
        .write_limit(LimitKnob::V1Limit, Limit::Bytes(512 * MIB))
        .expect("server cap");
    let log = sb.dir.join("daemon.log");
    let mut daemon = sb.daemon("daemon.log");
    let log_text = || std::fs::read_to_string(&log).unwrap_or_default();
    wait_for("both tracked", 10, || {
        events_named(&log, "tracking").len() >= 2
    });
    // Contexts just tracked are not run in turn (they may be containers
    // not started yet): the jobs begin after that.
    std::thread::sleep(START_GRACE + Duration::from_millis(500));
    let (mut j0, mut j1) = {
        let mut it = touchers.into_iter();
        (it.next().expect("j0"), it.next().expect("j1"))
    };
    let (j0p, j1p) = (&jobs.paths[0], &jobs.paths[1]);
    j0.alloc().expect("alloc");
    // j0 works on its heap for 6 s (a job that only sleeps keeps no room).
    let working = std::thread::spawn(move || {
        j0.spin(6000).expect("spin");
        j0
    });
    std::thread::sleep(Duration::from_millis(1500));
    // In a thread: frozen, its allocation may wait for its turn.
    let second = std::thread::spawn(move || {
        j1.alloc().expect("alloc");
        j1
    });
    wait_for("j1 to wait its turn", 10, || has_event(&log, "frozen", j1p));
    assert!(!has_event(&log, "frozen", j0p), "{}", log_text());
    // j0 ends its job; quiet for more than 2 s, then it starts again.
    let mut j0 = working.join().expect("j0 worked");
    j0.free().expect("free");
    std::thread::sleep(Duration::from_millis(2500));
    let first = std::thread::spawn(move || {
        j0.spin(500).expect("spin");
        j0
    });
    wait_for("j1 let in, j0 waiting", 10, || {
        has_event(&log, "thawed", j1p) && has_event(&log, "frozen", j0p)
    });
    stop_leaves_none_frozen(&mut daemon, &h, &jobs);
    let j0 = first.join().expect("j0 ran after the stop");
    let j1 = second.join().expect("j1 ran");
    drop((j0, j1));
}
