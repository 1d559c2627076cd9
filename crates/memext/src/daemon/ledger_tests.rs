//! The ledger on a fake cgroup tree: writes, foreign changes, refusals,
//! releases and restores.

use super::*;

const DOCKER: &str = "/docker/a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1";

fn fake(v: &str) -> tempfile::TempDir {
    crate::daemon::fixtures::copied(v)
}

/// The v1 fixture, its hierarchy and where its ledger is kept.
fn v1() -> (tempfile::TempDir, Hierarchy, std::path::PathBuf) {
    let t = fake("v1");
    let h = Hierarchy::probe(t.path()).expect("v1");
    let state = t.path().join("state/daemon.json");
    (t, h, state)
}

/// The fixture's Docker container cgroup.
fn docker(h: &Hierarchy) -> memext_cgroup::AnyCgroup {
    h.open(&CgroupPath::parse(DOCKER).expect("path"))
        .expect("open")
}

fn knob_file(t: &tempfile::TempDir, cg: &str, file: &str) -> String {
    std::fs::read_to_string(
        CgroupPath::parse(cg)
            .expect("path")
            .under(&t.path().join("memory"))
            .join(file),
    )
    .expect("read")
}

/// A cgroup whose limit writes fail, as v1's do below usage it cannot reclaim.
struct Refusing<'a>(&'a memext_cgroup::AnyCgroup);

impl MemoryCgroup for Refusing<'_> {
    fn path(&self) -> &CgroupPath {
        self.0.path()
    }
    fn version(&self) -> memext_cgroup::Version {
        self.0.version()
    }
    fn procs(&self) -> Result<Vec<u32>, CgroupError> {
        self.0.procs()
    }
    fn procs_recursive(&self) -> Result<Vec<u32>, CgroupError> {
        self.0.procs_recursive()
    }
    fn memory(&self) -> Result<memext_cgroup::MemoryStats, CgroupError> {
        self.0.memory()
    }
    fn cpu_usage(&self) -> Result<Option<std::time::Duration>, CgroupError> {
        self.0.cpu_usage()
    }
    fn memory_pressure(&self) -> Result<Option<memext_cgroup::Pressure>, CgroupError> {
        self.0.memory_pressure()
    }
    fn read_limit(&self, knob: LimitKnob) -> Result<Limit, CgroupError> {
        self.0.read_limit(knob)
    }
    fn write_limit(&self, knob: LimitKnob, value: Limit) -> Result<(), CgroupError> {
        Err(CgroupError::Write {
            path: self.0.path().clone(),
            file: knob.to_string(),
            value: value.to_string(),
            source: std::io::Error::from_raw_os_error(EBUSY),
        })
    }
    fn swappiness(&self) -> Result<Option<u32>, CgroupError> {
        self.0.swappiness()
    }
    fn set_swappiness(&self, value: u32) -> Result<(), CgroupError> {
        self.0.set_swappiness(value)
    }
    fn reclaim(&self, bytes: u64) -> Result<memext_cgroup::Reclaimed, CgroupError> {
        self.0.reclaim(bytes)
    }
}

const EBUSY: i32 = 16;

#[test]
fn a_refused_write_is_not_taken_for_someone_elses_change() {
    let t = fake("v1");
    let h = Hierarchy::probe(t.path()).expect("v1");
    let mut l = Ledger::load(&t.path().join("state/daemon.json")).expect("load");
    let cg = h
        .open(&CgroupPath::parse(DOCKER).expect("path"))
        .expect("open");
    l.write(&cg, LimitKnob::V1Limit, Limit::Bytes(256 << 20))
        .expect("first write");
    assert!(l
        .write(&Refusing(&cg), LimitKnob::V1Limit, Limit::Bytes(16 << 20))
        .is_err());
    // Asked for the refused value again: not tried again (a refused v1
    // limit write reclaims first; it would fail again at every tick).
    assert_eq!(
        l.write(&Refusing(&cg), LimitKnob::V1Limit, Limit::Bytes(16 << 20))
            .expect("not tried"),
        Written::Unchanged
    );
    assert_eq!(
        l.write(&cg, LimitKnob::V1Limit, Limit::Bytes(128 << 20))
            .expect("next write"),
        Written::Done,
        "memext still manages the knob after its own write was refused"
    );
    assert_eq!(knob_file(&t, DOCKER, "memory.limit_in_bytes"), "134217728");
}

/// Records are found by cgroup and knob after others were released in
/// between (the lookup index is rebuilt): a change someone else made to
/// a knob still recorded is noticed.
#[test]
fn records_left_after_a_release_still_notice_a_foreign_change() {
    const REDIS: &str = "/system.slice/redis-server.service";
    let t = fake("v1");
    let h = Hierarchy::probe(t.path()).expect("v1");
    let mut l = Ledger::load(&t.path().join("state/daemon.json")).expect("load");
    let open = |p: &str| h.open(&CgroupPath::parse(p).expect("path")).expect("open");
    let (docker, redis) = (open(DOCKER), open(REDIS));
    for cg in [&docker, &redis] {
        l.write(cg, LimitKnob::V1Limit, Limit::Bytes(256 << 20))
            .expect("write");
    }
    l.write(&docker, LimitKnob::V1MemswLimit, Limit::Bytes(512 << 20))
        .expect("write");
    l.release(&h, DOCKER).expect("release");
    assert_eq!(l.records().len(), 1);
    assert_eq!(
        l.write(&redis, LimitKnob::V1Limit, Limit::Bytes(256 << 20))
            .expect("again"),
        Written::Unchanged
    );
    redis
        .write_limit(LimitKnob::V1Limit, Limit::Bytes(64 << 20))
        .expect("someone else");
    assert!(matches!(
        l.write(&redis, LimitKnob::V1Limit, Limit::Bytes(128 << 20)),
        Ok(Written::Foreign { .. })
    ));
}

#[test]
fn write_records_and_restore_puts_back() {
    let (t, h, state) = v1();
    let mut l = Ledger::load(&state).expect("load");
    let cg = docker(&h);
    assert_eq!(
        l.write(&cg, LimitKnob::V1Limit, Limit::Bytes(256 << 20))
            .expect("write"),
        Written::Done
    );
    assert_eq!(knob_file(&t, DOCKER, "memory.limit_in_bytes"), "268435456");
    assert_eq!(
        l.write(&cg, LimitKnob::V1Limit, Limit::Bytes(256 << 20))
            .expect("again"),
        Written::Unchanged
    );
    let journal = state.with_extension("journal");
    assert!(journal.exists(), "the write is on disk before the knob");
    assert_eq!(Ledger::load(&state).expect("reload").records(), l.records());
    assert!(l.restore_all(&h).expect("restore").is_empty());
    // The fixture's original was 1 GiB.
    assert_eq!(knob_file(&t, DOCKER, "memory.limit_in_bytes"), "1073741824");
    assert!(!state.exists() && !journal.exists());
}

#[test]
fn releasing_a_context_puts_its_knobs_back_or_forgets_a_vanished_one() {
    let t = fake("v1");
    let h = Hierarchy::probe(t.path()).expect("v1");
    let mut l = Ledger::load(&t.path().join("state/daemon.json")).expect("load");
    let job = "/batch/job1";
    for p in [DOCKER, job] {
        let cg = h.open(&CgroupPath::parse(p).expect("path")).expect("open");
        l.write(&cg, LimitKnob::V1Limit, Limit::Bytes(64 << 20))
            .expect("write");
    }
    // The container is no longer selected: its limit goes back.
    let released = l.release(&h, DOCKER).expect("release");
    assert_eq!(released.len(), 1);
    assert_eq!(released[0].1, Restored::Done);
    assert_eq!(knob_file(&t, DOCKER, "memory.limit_in_bytes"), "1073741824");
    // The job's cgroup is gone: its record is dropped, nothing to write.
    std::fs::remove_dir_all(t.path().join("memory/batch/job1")).expect("rm");
    let released = l.release(&h, job).expect("release");
    assert_eq!(released[0].1, Restored::Vanished);
    assert!(l.records().is_empty(), "{:?}", l.records());
}

#[test]
fn someone_elses_change_is_left_alone() {
    let t = fake("v1");
    let h = Hierarchy::probe(t.path()).expect("v1");
    let mut l = Ledger::load(&t.path().join("daemon.json")).expect("load");
    let cg = h
        .open(&CgroupPath::parse(DOCKER).expect("path"))
        .expect("open");
    l.write(&cg, LimitKnob::V1Limit, Limit::Bytes(256 << 20))
        .expect("write");
    // An operator sets their own limit.
    cg.write_limit(LimitKnob::V1Limit, Limit::Bytes(700 << 20))
        .expect("operator");
    let w = l
        .write(&cg, LimitKnob::V1Limit, Limit::Bytes(128 << 20))
        .expect("guarded");
    assert!(
        matches!(w, Written::Foreign { found: Limit::Bytes(b), .. } if b == 700 << 20),
        "{w:?}"
    );
    assert!(l.is_foreign(cg.path()));
    assert_eq!(knob_file(&t, DOCKER, "memory.limit_in_bytes"), "734003200");
    // Not restored either: it is theirs now.
    l.restore_all(&h).expect("restore");
    assert_eq!(knob_file(&t, DOCKER, "memory.limit_in_bytes"), "734003200");
}

#[test]
fn a_restarted_daemon_adopts_what_it_left_and_forgets_the_rest() {
    let t = fake("v1");
    let h = Hierarchy::probe(t.path()).expect("v1");
    let state = t.path().join("daemon.json");
    let other = "/memext-demo/b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2";
    {
        let mut l = Ledger::load(&state).expect("load");
        for p in [DOCKER, other] {
            let cg = h.open(&CgroupPath::parse(p).expect("path")).expect("open");
            l.write(&cg, LimitKnob::V1Limit, Limit::Bytes(300 << 20))
                .expect("write");
        }
        // The daemon is killed here: no restore.
    }
    let cg = h
        .open(&CgroupPath::parse(other).expect("path"))
        .expect("open");
    cg.write_limit(LimitKnob::V1Limit, Limit::Max)
        .expect("someone resets it");
    let mut l = Ledger::load(&state).expect("reload");
    let dropped = l.reconcile(&h).expect("reconcile");
    assert_eq!(dropped.len(), 1, "{dropped:?}");
    assert_eq!(l.records().len(), 1);
    // Adopted: the same value again is not written twice.
    let cg = h
        .open(&CgroupPath::parse(DOCKER).expect("path"))
        .expect("open");
    assert_eq!(
        l.write(&cg, LimitKnob::V1Limit, Limit::Bytes(300 << 20))
            .expect("write"),
        Written::Unchanged
    );
    l.restore_all(&h).expect("restore");
    assert_eq!(knob_file(&t, DOCKER, "memory.limit_in_bytes"), "1073741824");
}

#[test]
fn values_are_kept_in_whole_pages() {
    assert_eq!(
        page_aligned(Limit::Bytes(1_000_000), 4096),
        Limit::Bytes(999_424)
    );
    assert_eq!(page_aligned(Limit::Max, 4096), Limit::Max);
}

/// A lowering in the background: while the reclaimer writes the limit
/// down in steps, any value between the two ends is memext's (a write, a
/// restart's reconcile and a restore take it as such); a value outside is
/// someone else's. Settled, the knob's value is what memext wrote.
#[test]
fn a_lowering_in_steps_is_memexts_all_the_way_down() {
    let (_t, h, state) = v1();
    let mut l = Ledger::load(&state).expect("load");
    let cg = docker(&h);
    let original = cg.read_limit(LimitKnob::V1Limit).expect("read");
    l.write(&cg, LimitKnob::V1Limit, Limit::Bytes(256 << 20))
        .expect("hold");
    assert_eq!(
        l.begin_lowering(&cg, LimitKnob::V1Limit, 64 << 20)
            .expect("begin"),
        Lowering::From(Limit::Bytes(256 << 20))
    );
    // The reclaimer's first step, then a daemon killed half-way: its
    // successor keeps the record.
    cg.write_limit(LimitKnob::V1Limit, Limit::Bytes(192 << 20))
        .expect("step");
    let mut again = Ledger::load(&state).expect("reload");
    assert!(again.reconcile(&h).expect("reconcile").is_empty());
    assert_eq!(
        l.settle_lowering(&cg, LimitKnob::V1Limit, None)
            .expect("settle"),
        Some(Limit::Bytes(192 << 20))
    );
    assert_eq!(
        l.begin_lowering(&cg, LimitKnob::V1Limit, 64 << 20)
            .expect("nothing"),
        Lowering::Nothing,
        "stopped short of 64 MiB: not asked again while it holds 192"
    );
    assert_eq!(
        l.begin_lowering(&cg, LimitKnob::V1Limit, 128 << 20)
            .expect("begin"),
        Lowering::From(Limit::Bytes(192 << 20))
    );
    cg.write_limit(LimitKnob::V1Limit, Limit::Bytes(160 << 20))
        .expect("step");
    // A restore half-way puts the original back.
    assert!(l.restore_all(&h).expect("restore").is_empty());
    assert_eq!(cg.read_limit(LimitKnob::V1Limit).expect("read"), original);

    // Outside the range: someone else's.
    let mut l = Ledger::load(&state).expect("load");
    l.write(&cg, LimitKnob::V1Limit, Limit::Bytes(256 << 20))
        .expect("hold");
    l.begin_lowering(&cg, LimitKnob::V1Limit, 64 << 20)
        .expect("begin");
    cg.write_limit(LimitKnob::V1Limit, Limit::Bytes(32 << 20))
        .expect("someone else");
    assert_eq!(
        l.settle_lowering(&cg, LimitKnob::V1Limit, None)
            .expect("settle"),
        None
    );
    assert!(l.is_foreign(cg.path()));
}

/// A lowering that reached its target and left room above it (v1's charge
/// room) ran its course: its target is asked again later like any other;
/// one that stopped anywhere else is not, while the knob holds that.
#[test]
fn a_lowering_left_above_its_target_is_not_a_refusal() {
    let (_t, h, state) = v1();
    let mut l = Ledger::load(&state).expect("load");
    let cg = docker(&h);
    l.write(&cg, LimitKnob::V1Limit, Limit::Bytes(256 << 20))
        .expect("hold");
    l.begin_lowering(&cg, LimitKnob::V1Limit, 64 << 20)
        .expect("begin");
    cg.write_limit(LimitKnob::V1Limit, Limit::Bytes(65 << 20))
        .expect("left 1 MiB above");
    assert_eq!(
        l.settle_lowering(&cg, LimitKnob::V1Limit, Some(Limit::Bytes(65 << 20)))
            .expect("settle"),
        Some(Limit::Bytes(65 << 20))
    );
    cg.write_limit(LimitKnob::V1Limit, Limit::Bytes(65 << 20))
        .expect("same");
    assert_eq!(
        l.begin_lowering(&cg, LimitKnob::V1Limit, 64 << 20)
            .expect("begin again"),
        Lowering::From(Limit::Bytes(65 << 20)),
        "its target is asked again"
    );
}
