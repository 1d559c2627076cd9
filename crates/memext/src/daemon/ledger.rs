//! The knob ledger: every cgroup knob the daemon has changed, with the value it
//! had before and the value memext last wrote. It is what makes the daemon safe
//! to stop, kill and restart:
//! - before each write the knob is re-read; if it is not what memext last
//!   wrote, someone else owns it now, and memext leaves that context alone;
//! - each change is saved before the knob is written (one journal line; see
//!   [`super::ledger_store`]), so a daemon that was killed finds it on
//!   restart, adopts what is still as it left it, and does not apply
//!   anything twice;
//! - on shutdown every knob still as memext left it goes back to its original.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use super::ledger_store::{Entry, LedgerStore};

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
    /// A lowering in the background is on its way from `written` down to
    /// this: any value between the two is memext's (the reclaimer writes
    /// the limit down in steps; a daemon killed half-way left one of them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lowering_to: Option<Limit>,
}

impl KnobRecord {
    /// Whether the knob holding `current` is as memext left it.
    pub fn is_ours(&self, current: Limit) -> bool {
        let below_written = |c: u64| match self.written {
            Limit::Bytes(w) => c <= w,
            Limit::Max => true,
        };
        current == self.written
            || matches!(
                (self.lowering_to, current),
                (Some(Limit::Bytes(to)), Limit::Bytes(c)) if to <= c && below_written(c)
            )
    }
}

/// What [`Ledger::begin_lowering`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lowering {
    /// Recorded: the knob holds this now, and may go down to the target.
    From(Limit),
    /// Nothing to lower: at or below the target already, or the target
    /// was refused while the knob still holds what it held then.
    Nothing,
    /// Someone else changed the knob (as [`Written::Foreign`]).
    Foreign { found: Limit, ours: Limit },
}

/// A knob against the ledger ([`Ledger::check`]).
enum Check {
    Ours {
        current: Limit,
        record: Option<usize>,
    },
    Foreign {
        found: Limit,
        ours: Limit,
    },
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
    store: LedgerStore,
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
        let (store, records) = LedgerStore::load(path)?;
        let mut ledger = Self {
            store,
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

    /// What `cgroup`'s `knob` held before memext first wrote it, if it did.
    pub fn original(&self, cgroup: &str, knob: LimitKnob) -> Option<Limit> {
        self.find(cgroup, knob).map(|i| self.records[i].original)
    }

    pub fn is_foreign(&self, cgroup: &CgroupPath) -> bool {
        self.foreign.contains(cgroup.as_str())
    }

    /// Records a change in `records` (made already) on disk.
    fn save(&mut self, e: Entry) -> Result<(), LedgerError> {
        self.store.append(e, &self.records)
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
                Some(c) if r.is_ours(c) => kept.push(r),
                Some(c) => dropped.push(format!(
                    "{} {}: now {c}, memext had written {}",
                    r.cgroup, r.knob, r.written
                )),
                None => dropped.push(format!("{} {}: cgroup gone", r.cgroup, r.knob)),
            }
        }
        self.records = kept;
        self.reindex();
        self.store.compact(&self.records)?;
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
        let (current, i) = match self.check(cg, knob)? {
            Check::Foreign { found, ours } => return Ok(Written::Foreign { found, ours }),
            Check::Ours { current, record } => (current, record),
        };
        let value = if knob.is_bytes() {
            page_aligned(value, self.page)
        } else {
            value
        };
        if current == value {
            return Ok(Written::Unchanged);
        }
        if i.is_some_and(|i| self.records[i].refused == Some(value)) {
            return Ok(Written::Unchanged);
        }
        // Record first: a crash between the two leaves a record whose knob
        // still holds the original, which reconcile then drops as foreign-safe.
        let i = match i {
            Some(i) => {
                self.records[i].written = value;
                self.records[i].refused = None;
                self.records[i].lowering_to = None;
                i
            }
            None => self.new_record(cg, knob, current, value),
        };
        self.save(Entry::Set(self.records[i].clone()))?;
        let wrote = cg.write_limit(knob, value);
        // The kernel may round, or refuse (v1 answers EBUSY to a limit below usage
        // it cannot reclaim to): keep what the knob holds, so the next check does not
        // mistake memext's own failed write for someone else's change.
        let held = cg.read_limit(knob)?;
        if held != value {
            let r = &mut self.records[i];
            r.written = held;
            r.refused = Some(value);
            let e = Entry::Set(r.clone());
            self.save(e)?;
        }
        wrote?;
        Ok(Written::Done)
    }

    /// Before a lowering in the background: checks the knob is memext's
    /// (as `write` does) and records that it may hold anything from what
    /// it holds now down to `to`. The reclaimer then writes it;
    /// [`Ledger::settle_lowering`] records where it ended.
    pub fn begin_lowering(
        &mut self,
        cg: &impl MemoryCgroup,
        knob: LimitKnob,
        to: u64,
    ) -> Result<Lowering, LedgerError> {
        let (current, i) = match self.check(cg, knob)? {
            Check::Foreign { found, ours } => return Ok(Lowering::Foreign { found, ours }),
            Check::Ours { current, record } => (current, record),
        };
        let to = page_aligned(Limit::Bytes(to), self.page);
        let i = i.unwrap_or_else(|| self.new_record(cg, knob, current, current));
        let above = matches!((current, to), (Limit::Max, _))
            || matches!((current, to), (Limit::Bytes(c), Limit::Bytes(t)) if c > t);
        if !above || self.records[i].refused == Some(to) {
            return Ok(Lowering::Nothing);
        }
        self.records[i].lowering_to = Some(to);
        self.save(Entry::Set(self.records[i].clone()))?;
        Ok(Lowering::From(current))
    }

    /// What `cg`'s knob holds now and its record, unless someone else
    /// changed it since memext wrote it (then the cgroup is theirs from
    /// here on).
    fn check(&mut self, cg: &impl MemoryCgroup, knob: LimitKnob) -> Result<Check, LedgerError> {
        let path = cg.path().as_str().to_owned();
        if self.foreign.contains(&path) {
            return Ok(Check::Foreign {
                found: Limit::Max,
                ours: Limit::Max,
            });
        }
        let current = cg.read_limit(knob)?;
        let record = self.find(&path, knob);
        if let Some(i) = record.filter(|&i| !self.records[i].is_ours(current)) {
            let ours = self.records[i].written;
            self.take_foreign(path)?;
            return Ok(Check::Foreign {
                found: current,
                ours,
            });
        }
        Ok(Check::Ours { current, record })
    }

    /// A record for a knob memext has not written before (not saved yet).
    fn new_record(
        &mut self,
        cg: &impl MemoryCgroup,
        knob: LimitKnob,
        original: Limit,
        written: Limit,
    ) -> usize {
        let path = cg.path().as_str().to_owned();
        self.index
            .entry(path.clone())
            .or_default()
            .push((knob, self.records.len()));
        self.records.push(KnobRecord {
            cgroup: path,
            knob,
            original,
            written,
            refused: None,
            lowering_to: None,
        });
        self.records.len() - 1
    }

    /// Someone else changed a knob of `path`: its records go, and memext
    /// never writes it again.
    fn take_foreign(&mut self, path: String) -> Result<(), LedgerError> {
        self.foreign.insert(path.clone());
        self.records.retain(|r| r.cgroup != path);
        self.reindex();
        self.save(Entry::DropCgroup(path))
    }

    /// After a lowering in the background: what the knob holds now is what
    /// memext wrote. Returns it (`None`: someone else's value, the context
    /// is theirs now, as with `write`). `left_at`: where a lowering that
    /// reached its target left the knob (`reclaim::Job::leave_at`, within
    /// where it began), if not at the target; anywhere else it stopped
    /// short, and that target is not asked again while the knob holds this.
    pub fn settle_lowering(
        &mut self,
        cg: &impl MemoryCgroup,
        knob: LimitKnob,
        left_at: Option<Limit>,
    ) -> Result<Option<Limit>, LedgerError> {
        let path = cg.path().as_str().to_owned();
        let Some(i) = self.find(&path, knob) else {
            return Ok(None);
        };
        let current = cg.read_limit(knob)?;
        if !self.records[i].is_ours(current) {
            self.take_foreign(path)?;
            return Ok(None);
        }
        let left_at = left_at.map(|l| page_aligned(l, self.page));
        let r = &mut self.records[i];
        if r.lowering_to
            .is_some_and(|to| current != to && Some(current) != left_at)
        {
            r.refused = r.lowering_to; // not tried again while it holds this
        }
        r.written = current;
        r.lowering_to = None;
        let e = Entry::Set(r.clone());
        self.save(e)?;
        Ok(Some(current))
    }
}

#[path = "ledger_restore.rs"]
mod restore;
pub use restore::Restored;

#[cfg(test)]
#[path = "ledger_tests.rs"]
mod tests;
