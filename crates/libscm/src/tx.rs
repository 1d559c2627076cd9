//! Small undo-log transactions. `add` copies a range's old bytes into the log
//! (made durable before the caller changes the range); `commit` makes the
//! changed ranges durable and then drops the log; a crash in between rolls the
//! ranges back at the next open. Allocations made inside a transaction are
//! logged too, so a rolled-back transaction frees them; frees are deferred to
//! commit, and a crash during those frees is finished at the next open.
//!
//! Log: `state` (IDLE / ACTIVE / COMMITTING), `used` (bytes of entries), then
//! entries `[u32 kind][u32 len][u64 offset][len bytes, padded to 8]`.

use crate::error::RegionError;
use crate::heap::Heap;
use crate::layout::{ALLOCATED, U_ENTRIES, U_STATE, U_USED};
use crate::pm::Pm;

const IDLE: u64 = 0;
const ACTIVE: u64 = 1;
const COMMITTING: u64 = 2;

const DATA: u64 = 1;
const ALLOC: u64 = 2;
const FREE: u64 = 3;

const ENTRY_HEADER: u64 = 16;

#[derive(Debug, Clone, Copy)]
pub struct UndoLog {
    start: u64,
    cap: u64,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    kind: u64,
    len: u64,
    off: u64,
    /// Where the saved bytes are in the log.
    data: u64,
}

/// What recovery did with an interrupted transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recovery {
    Nothing,
    RolledBack,
    FinishedCommit,
}

impl UndoLog {
    pub fn new(start: u64, cap: u64) -> Self {
        Self { start, cap }
    }

    pub fn active(&self, pm: &Pm) -> Result<bool, RegionError> {
        Ok(pm.load(self.start + U_STATE)? != IDLE)
    }

    pub fn begin(&self, pm: &Pm) -> Result<(), RegionError> {
        if self.active(pm)? {
            return Err(RegionError::Tx { what: "a transaction is already open on this region" });
        }
        pm.mem.store(self.start + U_USED, 0)?;
        pm.store_persist(self.start + U_STATE, ACTIVE)
    }

    fn entries(&self, pm: &Pm) -> Result<Vec<Entry>, RegionError> {
        let used = pm.load(self.start + U_USED)?;
        if used > self.cap - U_ENTRIES {
            return Err(RegionError::Corrupt { what: format!("undo log claims {used} bytes") });
        }
        let mut out = Vec::new();
        let mut at = self.start + U_ENTRIES;
        let end = at + used;
        while at < end {
            let head = pm.load(at)?;
            let (kind, len) = (head & 0xffff_ffff, head >> 32);
            let off = pm.load(at + 8)?;
            if !(DATA..=FREE).contains(&kind) || at + ENTRY_HEADER + len.next_multiple_of(8) > end {
                return Err(RegionError::Corrupt { what: format!("undo entry {head:#x} at {at}") });
            }
            out.push(Entry { kind, len, off, data: at + ENTRY_HEADER });
            at += ENTRY_HEADER + len.next_multiple_of(8);
        }
        Ok(out)
    }

    /// Appends one entry; durable once this returns.
    fn append(&self, pm: &Pm, kind: u64, off: u64, len: u64) -> Result<(), RegionError> {
        if !self.active(pm)? {
            return Err(RegionError::Tx { what: "no transaction is open on this region" });
        }
        let used = pm.load(self.start + U_USED)?;
        let size = ENTRY_HEADER + len.next_multiple_of(8);
        if U_ENTRIES + used + size > self.cap {
            return Err(RegionError::UndoFull { cap: self.cap - U_ENTRIES });
        }
        let at = self.start + U_ENTRIES + used;
        pm.mem.store(at, kind | (len << 32))?;
        pm.mem.store(at + 8, off)?;
        if kind == DATA {
            pm.mem.copy_within(off, at + ENTRY_HEADER, len)?;
        }
        pm.persist(at, ENTRY_HEADER + len)?;
        pm.store_persist(self.start + U_USED, used + size)
    }

    /// Saves `len` bytes at `off` before the caller changes them.
    pub fn add(&self, pm: &Pm, off: u64, len: u64) -> Result<(), RegionError> {
        if len > u64::from(u32::MAX) {
            return Err(RegionError::Invalid { what: format!("range of {len} bytes in one tx_add") });
        }
        self.append(pm, DATA, off, len)
    }

    pub fn log_alloc(&self, pm: &Pm, block: u64) -> Result<(), RegionError> {
        self.append(pm, ALLOC, block, 0)
    }

    pub fn log_free(&self, pm: &Pm, block: u64) -> Result<(), RegionError> {
        self.append(pm, FREE, block, 0)
    }

    /// Makes every added range durable, then performs the deferred frees.
    pub fn commit(&self, pm: &Pm, heap: &mut Heap) -> Result<(), RegionError> {
        let entries = self.entries(pm)?;
        if !self.active(pm)? {
            return Err(RegionError::Tx { what: "commit without a transaction" });
        }
        for e in entries.iter().filter(|e| e.kind == DATA) {
            pm.persist(e.off, e.len)?;
        }
        let frees: Vec<u64> = entries.iter().filter(|e| e.kind == FREE).map(|e| e.off).collect();
        if !frees.is_empty() {
            pm.store_persist(self.start + U_STATE, COMMITTING)?;
            for block in frees {
                heap.free(pm, block, &[])?;
            }
        }
        pm.store_persist(self.start + U_STATE, IDLE)
    }

    /// Restores every added range and frees what the transaction allocated.
    pub fn abort(&self, pm: &Pm, heap: &mut Heap) -> Result<(), RegionError> {
        if !self.active(pm)? {
            return Err(RegionError::Tx { what: "abort without a transaction" });
        }
        self.roll_back(pm, Some(heap))
    }

    fn roll_back(&self, pm: &Pm, mut heap: Option<&mut Heap>) -> Result<(), RegionError> {
        for e in self.entries(pm)?.iter().rev() {
            match e.kind {
                DATA => {
                    pm.mem.copy_within(e.data, e.off, e.len)?;
                    pm.persist(e.off, e.len)?;
                }
                // An allocation logged but never made (it failed) is already free.
                ALLOC => match heap.as_deref_mut() {
                    Some(h) if pm.load(e.off)? & ALLOCATED != 0 => h.free(pm, e.off, &[])?,
                    Some(_) => {}
                    None => Heap::free_if_allocated(pm, e.off)?,
                },
                _ => {}
            }
        }
        pm.store_persist(self.start + U_STATE, IDLE)
    }

    /// Run at open, before the heap walk: rolls an interrupted transaction back,
    /// or finishes an interrupted commit.
    pub fn recover(&self, pm: &Pm) -> Result<Recovery, RegionError> {
        match pm.load(self.start + U_STATE)? {
            IDLE => Ok(Recovery::Nothing),
            ACTIVE => {
                self.roll_back(pm, None)?;
                Ok(Recovery::RolledBack)
            }
            COMMITTING => {
                for e in self.entries(pm)?.iter().filter(|e| e.kind == FREE) {
                    Heap::free_if_allocated(pm, e.off)?;
                }
                pm.store_persist(self.start + U_STATE, IDLE)?;
                Ok(Recovery::FinishedCommit)
            }
            s => Err(RegionError::Corrupt { what: format!("undo log state {s}") }),
        }
    }
}
