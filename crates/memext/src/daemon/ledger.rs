//! The knob ledger: every cgroup knob the daemon has changed, with the value it
//! had before and the value memext last wrote. It is what makes the daemon safe
//! to stop, kill and restart:
//! - before each write the knob is re-read; if it is not what memext last
//!   wrote, someone else owns it now, and memext leaves that context alone;
//! - the ledger is saved (atomically) after every change, so a daemon that was
//!   killed finds it on restart, adopts what is still as it left it, and does
//!   not apply anything twice;
//! - on shutdown every knob still as memext left it goes back to its original.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use memext_cgroup::{CgroupError, CgroupPath, Hierarchy, Limit, LimitKnob, MemoryCgroup};

#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    #[error("cannot write the daemon state file {path}")]
    Save {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("daemon state file {path} is corrupt")]
    Corrupt {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("cannot read the daemon state file {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Cgroup(#[from] CgroupError),
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct KnobRecord {
    pub cgroup: String,
    pub knob: LimitKnob,
    pub original: Limit,
    pub written: Limit,
    /// A value the kernel refused (v1: a limit below what it can reclaim
    /// the cgroup to); asked again while the knob still holds `written`, it
    /// is not tried again (a refused v1 limit write reclaims before it
    /// fails: costly, and as refused the next time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<Limit>,
}

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct LedgerFile {
    records: Vec<KnobRecord>,
}

/// What a guarded write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// The knob now holds the value.
    Done,
    /// It already held it; nothing was written.
    Unchanged,
    /// Someone else changed the knob since memext wrote it: nothing written,
    /// and the context is to be left alone from now on.
    Foreign { found: Limit, ours: Limit },
}

pub struct Ledger {
    path: PathBuf,
    records: Vec<KnobRecord>,
    /// Where each cgroup's records are in `records` (a write looks its knob
    /// up at every re-assertion: thousands of contexts, each a few knobs).
    index: HashMap<String, Vec<(LimitKnob, usize)>>,
    /// Cgroups someone else took over; never written again.
    foreign: BTreeSet<String>,
    page: u64,
}

/// Limits are kept in whole pages, as the kernel stores them, so that what
/// memext wrote compares equal to what it reads back.
fn page_aligned(v: Limit, page: u64) -> Limit {
    match v {
        Limit::Bytes(b) => Limit::Bytes(b / page * page),
        Limit::Max => Limit::Max,
    }
}

impl Ledger {
    /// Loads the ledger of an earlier run, if any.
    pub fn load(path: &Path) -> Result<Self, LedgerError> {
        let records = match std::fs::read_to_string(path) {
            Ok(t) => {
                serde_json::from_str::<LedgerFile>(&t)
                    .map_err(|source| LedgerError::Corrupt {
                        path: path.into(),
                        source,
                    })?
                    .records
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(source) => {
                return Err(LedgerError::Read {
                    path: path.into(),
                    source,
                })
            }
        };
        let mut ledger = Self {
            path: path.into(),
            records,
            index: HashMap::new(),
            foreign: BTreeSet::new(),
            page: memext_sys::page_size(),
        };
        ledger.reindex();
        Ok(ledger)
    }

    /// Rebuilds `index` after records were removed.
    fn reindex(&mut self) {
        self.index.clear();
        for (i, r) in self.records.iter().enumerate() {
            self.index
                .entry(r.cgroup.clone())
                .or_default()
                .push((r.knob, i));
        }
    }

    /// Where the record of `cgroup`'s `knob` is (an indexed place is checked
    /// against the record: restore_each leaves the index behind when a save
    /// fails half-way).
    fn find(&self, cgroup: &str, knob: LimitKnob) -> Option<usize> {
        let is = |i: usize| {
            self.records
                .get(i)
                .is_some_and(|r| r.cgroup == cgroup && r.knob == knob)
        };
        let indexed = self
            .index
            .get(cgroup)
            .and_then(|v| v.iter().find(|(k, _)| *k == knob))
            .map(|&(_, i)| i);
        match indexed {
            Some(i) if is(i) => Some(i),
            Some(_) => (0..self.records.len()).find(|&i| is(i)),
            None => None,
        }
    }

    pub fn records(&self) -> &[KnobRecord] {
        &self.records
    }

    pub fn is_foreign(&self, cgroup: &CgroupPath) -> bool {
        self.foreign.contains(cgroup.as_str())
    }

    fn save(&self) -> Result<(), LedgerError> {
        let err = |source| LedgerError::Save {
            path: self.path.clone(),
            source,
        };
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(err)?;
        }
        let tmp = self.path.with_extension("tmp");
        let text = serde_json::to_string_pretty(&LedgerFile {
            records: self.records.clone(),
        })
        .expect("ledger serialises");
        std::fs::write(&tmp, text).map_err(err)?;
        std::fs::rename(&tmp, &self.path).map_err(err)
    }

    /// After a restart: keep the records whose knobs are still as memext left
    /// them; forget those whose cgroup is gone or that someone else changed.
    /// Returns what was forgotten, for the log.
    pub fn reconcile(&mut self, h: &Hierarchy) -> Result<Vec<String>, LedgerError> {
        let mut dropped = Vec::new();
        let mut kept = Vec::new();
        for r in std::mem::take(&mut self.records) {
            let current = CgroupPath::parse(&r.cgroup)
                .ok()
                .and_then(|p| h.open(&p).ok())
                .and_then(|cg| cg.read_limit(r.knob).ok());
            match current {
                Some(c) if c == r.written => kept.push(r),
                Some(c) => dropped.push(format!(
                    "{} {}: now {c}, memext had written {}",
                    r.cgroup, r.knob, r.written
                )),
                None => dropped.push(format!("{} {}: cgroup gone", r.cgroup, r.knob)),
            }
        }
        self.records = kept;
        self.reindex();
        self.save()?;
        Ok(dropped)
    }

    /// Writes `value` to `knob` of `cg`, unless someone else has changed it
    /// since memext last wrote it.
    pub fn write(
        &mut self,
        cg: &impl MemoryCgroup,
        knob: LimitKnob,
        value: Limit,
    ) -> Result<Written, LedgerError> {
        let path = cg.path().as_str().to_owned();
        if self.foreign.contains(&path) {
            return Ok(Written::Foreign {
                found: Limit::Max,
                ours: Limit::Max,
            });
        }
        let value = if knob.is_bytes() {
            page_aligned(value, self.page)
        } else {
            value
        };
        let current = cg.read_limit(knob)?;
        let i = self.find(&path, knob);
        if let Some(i) = i {
            let ours = self.records[i].written;
            if current != ours {
                self.foreign.insert(path.clone());
                self.records.retain(|r| r.cgroup != path);
                self.reindex();
                self.save()?;
                return Ok(Written::Foreign {
                    found: current,
                    ours,
                });
            }
        }
        if current == value {
            return Ok(Written::Unchanged);
        }
        if i.is_some_and(|i| self.records[i].refused == Some(value)) {
            return Ok(Written::Unchanged);
        }
        // Record first: a crash between the two leaves a record whose knob
        // still holds the original, which reconcile then drops as foreign-safe.
        match i {
            Some(i) => {
                self.records[i].written = value;
                self.records[i].refused = None;
            }
            None => {
                self.index
                    .entry(path.clone())
                    .or_default()
                    .push((knob, self.records.len()));
                self.records.push(KnobRecord {
                    cgroup: path.clone(),
                    knob,
                    original: current,
                    written: value,
                    refused: None,
                });
            }
        }
        self.save()?;
        let wrote = cg.write_limit(knob, value);
        // The kernel may round, or refuse (v1 answers EBUSY to a limit below usage
        // it cannot reclaim to): keep what the knob holds, so the next check does not
        // mistake memext's own failed write for someone else's change.
        let held = cg.read_limit(knob)?;
        if held != value {
            if let Some(r) = self.find(&path, knob).and_then(|i| self.records.get_mut(i)) {
                r.written = held;
                r.refused = Some(value);
            }
            self.save()?;
        }
        wrote?;
        Ok(Written::Done)
    }

    /// Puts every knob still as memext left it back to its original value and
    /// empties the ledger. Returns one message per knob not restored.
    pub fn restore_all(&mut self, h: &Hierarchy) -> Result<Vec<String>, LedgerError> {
        Ok(self
            .restore_each(h)?
            .into_iter()
            .filter_map(|(r, outcome)| match outcome {
                Restored::Done | Restored::Vanished => None,
                Restored::Foreign(c) => Some(format!(
                    "{} {}: left at {c}, someone else changed it",
                    r.cgroup, r.knob
                )),
                Restored::Failed(e) => Some(format!("{} {}: {e}", r.cgroup, r.knob)),
            })
            .collect())
    }

    /// Lets go of one cgroup's knobs (its context left the engine): each is
    /// put back if the cgroup is still there, and its record dropped either
    /// way, so that the ledger holds only contexts memext manages.
    pub fn release(
        &mut self,
        h: &Hierarchy,
        cgroup: &str,
    ) -> Result<Vec<(KnobRecord, Restored)>, LedgerError> {
        self.release_where(h, |r| r.cgroup == cgroup)
    }

    /// Lets go of the knobs `which` picks, as `release` does.
    pub fn release_where(
        &mut self,
        h: &Hierarchy,
        which: impl Fn(&KnobRecord) -> bool,
    ) -> Result<Vec<(KnobRecord, Restored)>, LedgerError> {
        let mut out = Vec::new();
        // Newest first, as in restore_all.
        while let Some(i) = self.records.iter().rposition(&which) {
            let r = self.records.remove(i);
            let outcome = restore_one(h, &r);
            out.push((r, outcome));
        }
        if !out.is_empty() {
            self.reindex();
            self.save()?;
        }
        Ok(out)
    }

    /// Like `restore_all`, with what happened to each knob, newest first.
    pub fn restore_each(
        &mut self,
        h: &Hierarchy,
    ) -> Result<Vec<(KnobRecord, Restored)>, LedgerError> {
        let mut out = Vec::new();
        // Newest first, so that coupled knobs unwind in reverse order.
        while let Some(r) = self.records.pop() {
            let outcome = restore_one(h, &r);
            out.push((r, outcome));
            self.save()?;
        }
        self.index.clear();
        match std::fs::remove_file(&self.path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(LedgerError::Save {
                    path: self.path.clone(),
                    source: e,
                })
            }
            _ => {}
        }
        Ok(out)
    }
}

/// What restoring one knob did.
#[derive(Debug, Clone, PartialEq)]
pub enum Restored {
    /// Back to its original value.
    Done,
    /// The cgroup is gone: nothing to restore.
    Vanished,
    /// It holds a value memext did not write: left as it is.
    Foreign(Limit),
    /// The kernel refused, or the record is unreadable.
    Failed(String),
}

fn restore_one(h: &Hierarchy, r: &KnobRecord) -> Restored {
    let Ok(path) = CgroupPath::parse(&r.cgroup) else {
        return Restored::Failed(format!("not a cgroup path: {:?}", r.cgroup));
    };
    let cg = match h.open(&path) {
        Ok(cg) => cg,
        Err(CgroupError::Vanished { .. }) => return Restored::Vanished,
        Err(e) => return Restored::Failed(e.to_string()),
    };
    match cg.read_limit(r.knob) {
        Ok(c) if c == r.written => match cg.write_limit(r.knob, r.original) {
            Ok(()) => Restored::Done,
            Err(e) => Restored::Failed(format!("restoring {}: {e}", r.original)),
        },
        Ok(c) => Restored::Foreign(c),
        Err(CgroupError::Vanished { .. }) => Restored::Vanished,
        Err(e) => Restored::Failed(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOCKER: &str = "/docker/a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1";

    fn fake(v: &str) -> tempfile::TempDir {
        let src = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../memext-cgroup/fixtures")
            .join(v);
        let dst = tempfile::tempdir().expect("tempdir");
        let status = std::process::Command::new("cp")
            .arg("-r")
            .arg(format!("{}/.", src.display()))
            .arg(dst.path())
            .status();
        assert!(status.expect("cp").success());
        dst
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
        let t = fake("v1");
        let h = Hierarchy::probe(t.path()).expect("v1");
        let state = t.path().join("state/daemon.json");
        let mut l = Ledger::load(&state).expect("load");
        let cg = h
            .open(&CgroupPath::parse(DOCKER).expect("path"))
            .expect("open");
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
        assert!(state.exists());
        assert!(l.restore_all(&h).expect("restore").is_empty());
        // The fixture's original was 1 GiB.
        assert_eq!(knob_file(&t, DOCKER, "memory.limit_in_bytes"), "1073741824");
        assert!(!state.exists());
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
}
