//! Where the knob ledger lives on disk: a snapshot (`daemon.json`, written
//! atomically) and a journal beside it (`daemon.journal`, one JSON line per
//! change, appended before the knob is written). A change costs one short
//! append, not a rewrite of every record: with thousands of contexts a batch
//! of push-outs rewrote the whole file once per knob.
//!
//! Each snapshot has a generation; journal lines carry the generation they
//! follow. A compaction writes the next generation's snapshot, then empties
//! the journal: a crash between the two leaves lines of the old generation,
//! which a load skips (the snapshot already holds them). A torn last line (a
//! crash during its append) is ignored: its knob was not written yet.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use memext_cgroup::LimitKnob;

use super::ledger::{KnobRecord, LedgerError};

/// One change to the records.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Entry {
    /// The record of its cgroup and knob is now this one (added at the end
    /// if there was none: records unwind newest first).
    Set(KnobRecord),
    /// The record of this cgroup's knob is gone.
    Drop { cgroup: String, knob: LimitKnob },
    /// Every record of this cgroup is gone (someone else took it over).
    DropCgroup(String),
}

impl Entry {
    /// Applies the change to `records`.
    pub fn apply(&self, records: &mut Vec<KnobRecord>) {
        match self {
            Entry::Set(r) => {
                match records
                    .iter_mut()
                    .find(|x| x.cgroup == r.cgroup && x.knob == r.knob)
                {
                    Some(x) => *x = r.clone(),
                    None => records.push(r.clone()),
                }
            }
            Entry::Drop { cgroup, knob } => {
                records.retain(|x| !(x.cgroup == *cgroup && x.knob == *knob));
            }
            Entry::DropCgroup(cgroup) => records.retain(|x| x.cgroup != *cgroup),
        }
    }
}

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Snapshot {
    #[serde(default)]
    generation: u64,
    records: Vec<KnobRecord>,
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Line {
    g: u64,
    e: Entry,
}

/// The journal is folded into a new snapshot once it has this many lines,
/// or twice as many as there are records, whichever is more.
const COMPACT_AFTER: usize = 64;

pub struct LedgerStore {
    snapshot: PathBuf,
    journal: PathBuf,
    generation: u64,
    /// Lines in the journal.
    lines: usize,
}

impl LedgerStore {
    /// Reads the records an earlier run left at `snapshot` (and in its
    /// journal); none if there is nothing there.
    pub fn load(snapshot: &Path) -> Result<(Self, Vec<KnobRecord>), LedgerError> {
        let corrupt = |source| LedgerError::Corrupt {
            path: snapshot.into(),
            source,
        };
        let mut file: Snapshot = match read_optional(snapshot)? {
            Some(t) => serde_json::from_str(&t).map_err(corrupt)?,
            None => Snapshot::default(),
        };
        let journal = snapshot.with_extension("journal");
        let mut lines = 0;
        for text in read_optional(&journal)?.unwrap_or_default().lines() {
            let Ok(line) = serde_json::from_str::<Line>(text) else {
                tracing::warn!(
                    "{}: a torn last line is ignored (its knob was not written)",
                    journal.display()
                );
                break;
            };
            lines += 1;
            if line.g == file.generation {
                line.e.apply(&mut file.records);
            }
        }
        let store = Self {
            snapshot: snapshot.into(),
            journal,
            generation: file.generation,
            lines,
        };
        Ok((store, file.records))
    }

    /// Appends one change; folds the journal into a new snapshot when it has
    /// grown long (`records` is the state after the change).
    pub fn append(&mut self, e: Entry, records: &[KnobRecord]) -> Result<(), LedgerError> {
        if self.lines >= COMPACT_AFTER.max(2 * records.len()) {
            return self.compact(records);
        }
        let mut text = serde_json::to_string(&Line {
            g: self.generation,
            e,
        })
        .expect("a journal line serialises");
        text.push('\n');
        self.make_dir()?;
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.journal)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .map_err(|source| self.save_error(&self.journal, source))?;
        self.lines += 1;
        Ok(())
    }

    /// Writes `records` as the next generation's snapshot and empties the
    /// journal.
    pub fn compact(&mut self, records: &[KnobRecord]) -> Result<(), LedgerError> {
        self.make_dir()?;
        let next = Snapshot {
            generation: self.generation + 1,
            records: records.to_vec(),
        };
        let tmp = self.snapshot.with_extension("tmp");
        let text = serde_json::to_string_pretty(&next).expect("ledger serialises");
        std::fs::write(&tmp, text)
            .and_then(|()| std::fs::rename(&tmp, &self.snapshot))
            .map_err(|source| self.save_error(&self.snapshot, source))?;
        self.generation = next.generation;
        remove_optional(&self.journal).map_err(|source| self.save_error(&self.journal, source))?;
        self.lines = 0;
        Ok(())
    }

    /// Removes the snapshot and the journal (every knob is restored).
    pub fn remove(&mut self) -> Result<(), LedgerError> {
        for p in [&self.journal, &self.snapshot] {
            remove_optional(p).map_err(|source| self.save_error(p, source))?;
        }
        self.lines = 0;
        Ok(())
    }

    fn make_dir(&self) -> Result<(), LedgerError> {
        match self.snapshot.parent() {
            Some(dir) => {
                std::fs::create_dir_all(dir).map_err(|source| self.save_error(dir, source))
            }
            None => Ok(()),
        }
    }

    fn save_error(&self, path: &Path, source: std::io::Error) -> LedgerError {
        LedgerError::Save {
            path: path.into(),
            source,
        }
    }
}

fn read_optional(path: &Path) -> Result<Option<String>, LedgerError> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(LedgerError::Read {
            path: path.into(),
            source,
        }),
    }
}

fn remove_optional(path: &Path) -> std::io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

#[cfg(test)]
#[path = "ledger_store_tests.rs"]
mod tests;
