//! `memext daemon` end to end on this host's real cgroups (v1) with a real
//! swap tier and real processes: an idle context is pushed out; when it wakes,
//! its working set is back in memory before it touches it; SIGTERM restores
//! every knob. Needs root; everything is removed on drop, also on failure.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use memext_cgroup::{AnyCgroup, Limit, LimitKnob, MemoryCgroup};
use memext_e2e::sandbox::TierSandbox;
use memext_e2e::toucher::Toucher;
use memext_e2e::{events_named, host_hierarchy, is_root, status_row, ScratchCgroup};

static MACHINE: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    assert!(is_root(), "the end-to-end suite needs root");
    MACHINE.lock().unwrap_or_else(|p| p.into_inner())
}

fn helper() -> &'static std::path::Path {
    std::path::Path::new(env!("CARGO_BIN_EXE_memext-e2e"))
}

fn mapped(t: &Toucher) -> (u64, u64) {
    t.mapped().expect("pagemap")
}

fn wait_for(what: &str, secs: u64, f: impl FnMut() -> bool) {
    memext_e2e::sandbox::wait_for(what, secs, f).expect("condition");
}

fn config(cg: &ScratchCgroup, extra: &str) -> String {
    format!(
        "[[select]]\ncgroup = \"{}/*\"\nclass = \"extend\"\n\n[class.extend]\nidle_after = \"2s\"\nfloor = \"16MiB\"\n\n\
         [daemon]\ncapacity = \"4GiB\"\ntick = \"500ms\"\npoll = \"20ms\"\nsocket = \"@DIR@/memext.sock\"\n\n{extra}",
        cg.parent
    )
}

/// What each daemon test starts from: a scratch cgroup selected as `extend`,
/// a sandbox with the daemon config (and a swap file of `swap`, if given,
/// already up), and a toucher holding `mib` MiB in the cgroup.
struct Setup {
    cg: ScratchCgroup,
    sb: TierSandbox,
    t: Toucher,
    c: AnyCgroup,
}

fn setup(label: &str, mib: usize, swap: Option<&str>) -> Setup {
    let h = host_hierarchy().expect("hierarchy");
    let cg = ScratchCgroup::new(&h, label).expect("cgroup");
    let tiers = swap.map_or(String::new(), |size| {
        format!("[[tiers.swapfile]]\npath = \"@DIR@/swap0\"\nsize = \"{size}\"\npriority = 10\n")
    });
    let sb = TierSandbox::new(label, &config(&cg, &tiers));
    if swap.is_some() {
        sb.up();
    }
    let mut t = Toucher::spawn(helper(), mib << 20).expect("toucher");
    cg.attach(t.pid()).expect("attach");
    t.alloc().expect("alloc");
    let c = cg.open().expect("open");
    Setup { cg, sb, t, c }
}

#[test]
fn idle_context_is_pushed_out_and_back_in_memory_when_it_wakes() {
    let _g = serial();
    let Setup { cg, sb, mut t, c } = setup("daemon", 256, Some("1GiB"));
    let original = c.read_limit(LimitKnob::V1Limit).expect("limit");

    let log = sb.dir.join("daemon.log");
    let mut daemon = sb.daemon("daemon.log");
    // Pushed out: at least 80% of the buffer leaves DRAM.
    wait_for("the push-out", 30, || {
        let (res, total) = mapped(&t);
        res * 5 <= total
    });
    wait_for(
        "the limit squeeze after the push-out",
        10,
        || matches!(c.read_limit(LimitKnob::V1Limit), Ok(Limit::Bytes(b)) if b < 64 << 20),
    );
    // Held at a low v1 limit, the context must pause rather than be OOM-killed
    // if its wake outruns the raise.
    assert_eq!(
        c.read_limit(LimitKnob::V1OomKillDisable)
            .expect("oom_control"),
        Limit::Bytes(1)
    );
    let out = sb.run(&["status", "--json"]);
    let row =
        status_row(&String::from_utf8_lossy(&out.stdout), cg.path.as_str()).expect("daemon status");
    assert_eq!(row["state"], "idle", "{row}");
    assert_eq!(row["out"], true, "{row}");
    assert!(
        row["pushed_out_pages"].as_u64().unwrap_or(0) > 40_000,
        "{row}"
    );
    assert!(
        row["working_set_bytes"].as_u64().unwrap_or(0) >= 250 << 20,
        "{row}"
    );

    // It wakes: CPU work first, no memory touched yet.
    t.spin(150).expect("spin");
    let t0 = Instant::now();
    wait_for("the working set to be back in memory", 10, || {
        let (incore, total) = t.incore().expect("incore");
        incore * 10 >= total * 9
    });
    let back_after = t0.elapsed();
    let (res, total) = mapped(&t);
    assert!(
        res * 5 <= total,
        "the process had touched {res} of {total} pages itself"
    );
    let touch = t.touch().expect("touch");
    let log_text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        touch.major_faults * 20 <= total,
        "{} major faults on {total} pages after the bring-back ({back_after:?}); log:\n{log_text}",
        touch.major_faults
    );
    assert!(!events_named(&log, "woke").is_empty(), "{log_text}");

    // SIGTERM: knobs back as they were, state and socket gone.
    let status = daemon.terminate(20).expect("daemon exits on SIGTERM");
    assert!(
        status.success(),
        "{status:?}; log:\n{}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    assert_eq!(c.read_limit(LimitKnob::V1Limit).expect("limit"), original);
    assert_eq!(
        c.read_limit(LimitKnob::V1OomKillDisable)
            .expect("oom_control"),
        Limit::Bytes(0)
    );
    assert!(!sb.dir.join("state/daemon.json").exists());
    assert!(!sb.dir.join("memext.sock").exists());
    eprintln!(
        "back in memory {back_after:?} after the wake; {} major faults on touch",
        touch.major_faults
    );
    drop(t);
}

#[test]
fn dry_run_prints_the_push_out_and_changes_nothing() {
    let _g = serial();
    let h = host_hierarchy().expect("hierarchy");
    let cg = ScratchCgroup::new(&h, "idle").expect("cgroup");
    let sb = TierSandbox::new("dryrun", &config(&cg, ""));
    let mut t = Toucher::spawn(helper(), 64 << 20).expect("toucher");
    cg.attach(t.pid()).expect("attach");
    t.alloc().expect("alloc");
    let out = sb
        .command(&["daemon", "--dry-run", "--ticks", "8"])
        .output()
        .expect("dry run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("dry-run: {} [idle]: push out to 16.0MiB", cg.path)),
        "{text}"
    );
    assert_eq!(
        cg.open()
            .expect("open")
            .read_limit(LimitKnob::V1Limit)
            .expect("limit"),
        Limit::Max
    );
    let (res, total) = mapped(&t);
    assert!(
        res * 10 >= total * 9,
        "a dry run paged memory out: {res} of {total}"
    );
    assert!(!sb.dir.join("state/daemon.json").exists());
}

#[test]
fn capacity_is_read_from_a_parent_cgroups_limit() {
    let _g = serial();
    let h = host_hierarchy().expect("hierarchy");
    let cg = ScratchCgroup::new(&h, "active").expect("cgroup");
    h.open(&cg.parent)
        .expect("parent")
        .write_limit(LimitKnob::V1Limit, Limit::Bytes(96 << 20))
        .expect("parent limit");
    let toml = config(&cg, "").replace(
        "capacity = \"4GiB\"",
        &format!("capacity_cgroup = \"{}\"", cg.parent),
    );
    let sb = TierSandbox::new("capacity", &toml);
    let mut t = Toucher::spawn(helper(), 32 << 20).expect("toucher");
    cg.attach(t.pid()).expect("attach");
    t.alloc().expect("alloc");
    let out = sb
        .command(&["daemon", "--dry-run", "--ticks", "2"])
        .output()
        .expect("dry run");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("capacity 96.0MiB"), "{stderr}");
    // The one active context may have all of it, and no more.
    assert!(
        stdout.contains(&format!("dry-run: {} [active]: limit 96.0MiB", cg.path)),
        "{stdout}"
    );
}

#[test]
fn a_critical_context_under_pressure_slows_memext_down_and_says_so() {
    let _g = serial();
    let h = host_hierarchy().expect("hierarchy");
    let cg = ScratchCgroup::new(&h, "critical").expect("cgroup");
    // The operator's own cap, too small for the context: it swaps on every pass.
    // (memext never limits a critical context; it must leave this cap alone.)
    let c = cg.open().expect("open");
    c.write_limit(LimitKnob::V1Limit, Limit::Bytes(24 << 20))
        .expect("cap");
    let toml = format!(
        "[[select]]\ncgroup = \"{}/*\"\nclass = \"critical\"\n\n\
         [daemon]\ncapacity = \"4GiB\"\ntick = \"500ms\"\npoll = \"20ms\"\nsocket = \"@DIR@/memext.sock\"\n\n\
         [[tiers.swapfile]]\npath = \"@DIR@/swap0\"\nsize = \"256MiB\"\npriority = 10\n",
        cg.parent
    );
    let sb = TierSandbox::new("pressure", &toml);
    sb.up();
    let mut t = Toucher::spawn(helper(), 48 << 20).expect("toucher");
    cg.attach(t.pid()).expect("attach");
    t.alloc().expect("alloc");
    let log = sb.dir.join("daemon.log");
    let daemon = sb.daemon("daemon.log");
    let throttle = |on: bool| {
        events_named(&log, "throttle")
            .into_iter()
            .filter(|e| e["on"] == on)
            .collect::<Vec<_>>()
    };
    let start = Instant::now();
    let mut majors = 0;
    while throttle(true).is_empty() && start.elapsed() < Duration::from_secs(20) {
        majors += t.touch().expect("touch").major_faults;
    }
    let on = throttle(true);
    assert!(
        on.first()
            .is_some_and(|e| e["pressed"] == cg.path.to_string().as_str()),
        "not said after {majors} major faults: {on:?}\n{}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    // Quiet again: the daemon says so within a few ticks.
    wait_for("full bandwidth again", 20, || !throttle(false).is_empty());
    drop(daemon);
    assert_eq!(
        c.read_limit(LimitKnob::V1Limit).expect("limit"),
        Limit::Bytes(24 << 20),
        "memext changed a critical context's cap"
    );
}

#[test]
fn a_knob_someone_else_changes_is_left_alone() {
    let _g = serial();
    let Setup { cg, sb, mut t, c } = setup("foreign", 64, Some("256MiB"));
    let log = sb.dir.join("daemon.log");
    let mut daemon = sb.daemon("daemon.log");
    wait_for("memext to set a limit", 30, || {
        matches!(c.read_limit(LimitKnob::V1Limit), Ok(Limit::Bytes(_)))
    });
    // An operator takes over.
    c.write_limit(LimitKnob::V1Limit, Limit::Bytes(900 << 20))
        .expect("operator's limit");
    t.spin(100)
        .expect("wake it, so memext wants to change the limit");
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(
        c.read_limit(LimitKnob::V1Limit).expect("limit"),
        Limit::Bytes(900 << 20)
    );
    assert!(daemon.terminate(20).expect("exits").success());
    // Not restored either: the operator's value stays.
    assert_eq!(
        c.read_limit(LimitKnob::V1Limit).expect("limit"),
        Limit::Bytes(900 << 20)
    );
    let foreign = events_named(&log, "foreign-knob");
    assert_eq!(foreign.len(), 1, "{foreign:?}");
    assert_eq!(foreign[0]["context"], cg.path.to_string().as_str());
    drop(t);
}

#[test]
fn a_daemon_killed_with_sigkill_is_reconciled_by_the_next_one() {
    let _g = serial();
    let Setup { cg: _cg, sb, t, c } = setup("crash", 64, Some("256MiB"));
    let start = |log: &str| sb.daemon(log);
    let mut first = start("first.log");
    wait_for("the first daemon's limit", 30, || {
        matches!(c.read_limit(LimitKnob::V1Limit), Ok(Limit::Bytes(_)))
    });
    first.0.kill().expect("SIGKILL");
    first.0.wait().expect("reap");
    let left = c.read_limit(LimitKnob::V1Limit).expect("limit");
    assert_ne!(
        left,
        Limit::Max,
        "the killed daemon's limit is still in place"
    );
    assert!(
        sb.dir.join("state/daemon.json").exists(),
        "the ledger survived the crash"
    );
    // The stale socket of the killed daemon must not stop the next one.
    let mut second = start("second.log");
    wait_for("the second daemon to adopt the ledger", 30, || {
        events_named(&sb.dir.join("second.log"), "adopted")
            .first()
            .is_some_and(|e| e["knobs"].as_u64() >= Some(1))
    });
    assert!(second.terminate(20).expect("exits").success());
    assert_eq!(
        c.read_limit(LimitKnob::V1Limit).expect("limit"),
        Limit::Max,
        "restored to the original, not to the crash value"
    );
    assert!(!sb.dir.join("state/daemon.json").exists());
    drop(t);
}

/// Prediction, live: a context that wakes every 10 s is learned from its wakes,
/// brought back `prefetch_lead` (3 s) before the next one and mapped back as huge
/// pages, and held in DRAM until the wake comes. The wake then finds its working
/// set mapped and touches it with almost no page faults (plain Linux: one fault a
/// page). About a minute: the period is known from the fifth wake.
#[test]
fn a_periodic_context_is_mapped_back_before_its_predicted_wake() {
    const PERIOD: Duration = Duration::from_secs(10);
    let _g = serial();
    // Every part bound: the cgroup must outlive the toucher in it (dropped in reverse).
    let Setup {
        cg: _cg,
        sb,
        mut t,
        c: _c,
    } = setup("periodic", 128, Some("1GiB"));
    let log = sb.dir.join("daemon.log");
    let _daemon = sb.daemon("daemon.log");
    wait_for("the first push-out", 30, || {
        let (res, total) = mapped(&t);
        res * 5 <= total
    });
    let t0 = Instant::now();
    let mut found = Vec::new();
    for k in 0..7u32 {
        while t0.elapsed() < PERIOD * k {
            std::thread::sleep(Duration::from_millis(5));
        }
        let woke = || {
            events_named(&log, "woke")
                .iter()
                .filter(|e| e["via"] == "poll")
                .count()
        };
        let seen_before = woke();
        let (res, total) = mapped(&t);
        let touch = t.touch().expect("touch");
        found.push((k + 1, res, total, touch.minor_faults, touch.major_faults));
        let predicted = k >= 4 && res * 10 >= total * 9 && touch.minor_faults * 10 <= total;
        if predicted {
            // A wake served by the prediction takes no fault and a few ms of CPU;
            // the daemon must still see it, or it drops out of the history.
            std::thread::sleep(Duration::from_millis(300));
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            assert!(
                events_named(&log, "bringing-back")
                    .iter()
                    .any(|e| e["reason"] == "periodic" && e["map_back"] == true),
                "{text}"
            );
            assert!(!events_named(&log, "mapped-back").is_empty(), "{text}");
            assert_eq!(
                woke(),
                seen_before + 1,
                "the served wake was not seen:\n{text}"
            );
            eprintln!(
                "wake {}: {res} of {total} pages mapped before the touch, {} minor faults",
                k + 1,
                touch.minor_faults
            );
            return;
        }
    }
    panic!(
        "no wake found its working set mapped (wake, mapped, pages, minor, major): {found:?}; log:\n{}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
}

/// The model survives a restart: a context pushed out by one daemon, which is
/// then killed with SIGKILL, is served on its next wake by the next daemon from
/// the working set the first one saved (without it, the restarted daemon sees
/// a new, active context and the wake faults its 256 MiB in page by page).
#[test]
fn a_restarted_daemon_serves_a_wake_from_the_saved_working_set() {
    let _g = serial();
    let Setup { cg, sb, mut t, c } = setup("resume", 256, Some("1GiB"));
    let mut first = sb.daemon("first.log");
    wait_for("the push-out", 30, || {
        let (res, total) = mapped(&t);
        res * 5 <= total
    });
    let model = sb.dir.join("state/model.json");
    let saved_out = || {
        let text = std::fs::read_to_string(&model).unwrap_or_default();
        serde_json::from_str::<serde_json::Value>(&text).is_ok_and(|m| {
            m["contexts"].as_array().is_some_and(|cs| {
                cs.iter().any(|c| {
                    c["state"]["id"] == cg.path.to_string().as_str() && c["state"]["out"] == true
                })
            })
        })
    };
    wait_for("the model saved with the context pushed out", 15, saved_out);
    // The steady state a restart meets: pushed out and held at the floor,
    // which also drops the swap cache (until then a wake takes minor faults
    // only, daemon or not).
    wait_for("the limit at the floor", 15, || {
        c.read_limit(LimitKnob::V1Limit).ok() == Some(Limit::Bytes(16 << 20))
    });
    std::thread::sleep(Duration::from_millis(600));
    first.0.kill().expect("SIGKILL");
    first.0.wait().expect("reap");

    let log = sb.dir.join("second.log");
    let _second = sb.daemon("second.log");
    wait_for("the second daemon to resume the context", 15, || {
        events_named(&log, "resumed")
            .iter()
            .any(|e| e["context"] == cg.path.to_string().as_str() && e["out"] == true)
    });
    let (_, total) = mapped(&t);
    let touch = t.touch().expect("touch");
    std::thread::sleep(Duration::from_millis(800)); // the read-back's own event
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    // The second daemon saw the wake and read the saved working set back.
    let read_back: u64 = events_named(&log, "read-back")
        .iter()
        .filter(|e| e["context"] == cg.path.to_string().as_str())
        .filter_map(|e| e["bytes"].as_u64())
        .sum();
    assert!(
        events_named(&log, "bringing-back")
            .iter()
            .any(|e| e["reason"] == "woke"),
        "the second daemon did not bring it back:\n{text}"
    );
    assert!(
        read_back * 10 >= 9 * (256 << 20),
        "read back {read_back} bytes of a 256 MiB working set:\n{text}"
    );
    // Measured here: without the saved model 7,699-7,704 major faults (one
    // per swap read-ahead cluster: the restarted daemon saw a new, active
    // context); with it 3,665-4,274, the touch outrunning a read-back paced
    // at the default 512 MiB/s.
    assert!(
        touch.major_faults * 12 <= total,
        "{} major faults on {total} pages after the restart:\n{text}",
        touch.major_faults
    );
}
