//! Letting go of the ledger's knobs: each put back to its original where it
//! is still as memext left it (at shutdown, or when its context leaves),
//! and its record dropped.

use memext_cgroup::{CgroupError, CgroupPath, Hierarchy, Limit, MemoryCgroup};

use super::{Entry, KnobRecord, Ledger, LedgerError};

impl Ledger {
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
        }
        for (r, _) in &out {
            let e = Entry::Drop {
                cgroup: r.cgroup.clone(),
                knob: r.knob,
            };
            self.save(e)?;
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
            let e = Entry::Drop {
                cgroup: r.cgroup.clone(),
                knob: r.knob,
            };
            out.push((r, outcome));
            self.save(e)?;
        }
        self.index.clear();
        self.store.remove()?;
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
        Ok(c) if r.is_ours(c) => match cg.write_limit(r.knob, r.original) {
            Ok(()) => Restored::Done,
            Err(e) => Restored::Failed(format!("restoring {}: {e}", r.original)),
        },
        Ok(c) => Restored::Foreign(c),
        Err(CgroupError::Vanished { .. }) => Restored::Vanished,
        Err(e) => Restored::Failed(e.to_string()),
    }
}
