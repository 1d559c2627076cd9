//! Small undo-log transactions. `add` copies a range's old bytes into the log
//! (made durable before the caller changes the range); `commit` makes the
//! changed ranges durable and then ends the transaction; a crash in between
//! rolls the ranges back at the next open. Allocations made inside a transaction
//! are logged too, so a rolled-back transaction frees them; frees are deferred
//! to commit, and a crash during those frees is finished at the next open.
//!
//! The log's first word holds the transaction's generation and state in one
//! atomic store. Entries `[u32 kind|u32 len][u64 offset][u64 generation]
//! [u64 checksum][len bytes, zero-padded to 8]` follow one another, each on a
//! cache line of its own; recovery
//! takes entries while their generation is the log's and their checksum holds,
//! so appending an entry needs one flush and one fence, with no length word to
//! keep in step.

use crate::error::RegionError;
use crate::heap::Heap;
use crate::layout::{ALLOCATED, U_ENTRIES, U_STATE};
use crate::pm::Pm;

const IDLE: u64 = 0;
const ACTIVE: u64 = 1;
const COMMITTING: u64 = 2;

const DATA: u64 = 1;
const ALLOC: u64 = 2;
const FREE: u64 = 3;

const ENTRY_HEADER: u64 = 32;

#[derive(Debug)]
pub struct UndoLog {
    start: u64,
    cap: u64,
    /// Bytes of entries in the open transaction (volatile: recovery scans instead).
    used: u64,
    /// The open transaction's entries, as appended (volatile copy for commit/abort).
    open: Vec<Entry>,
    /// `begin` stored the new generation but has not flushed it: the first append
    /// flushes it with its entry under one fence.
    begin_unflushed: bool,
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

fn word(generation: u64, state: u64) -> u64 {
    (generation << 2) | state
}

/// A checksum of an entry's header fields and its (zero-padded) saved bytes.
fn checksum(
    pm: &Pm,
    head: u64,
    off: u64,
    generation: u64,
    data: u64,
    len: u64,
) -> Result<u64, RegionError> {
    let mix = |h: u64, w: u64| (h ^ w).wrapping_mul(0x0100_0000_01b3).rotate_left(29);
    let mut h = mix(mix(mix(0xcbf2_9ce4_8422_2325, head), off), generation);
    let mut at = data;
    while at < data + len.next_multiple_of(8) {
        h = mix(h, pm.load(at)?);
        at += 8;
    }
    Ok(h)
}

impl UndoLog {
    pub fn new(start: u64, cap: u64) -> Self {
        Self {
            start,
            cap,
            used: 0,
            open: Vec::new(),
            begin_unflushed: false,
        }
    }

    fn load_word(&self, pm: &Pm) -> Result<(u64, u64), RegionError> {
        let w = pm.load(self.start + U_STATE)?;
        Ok((w >> 2, w & 3))
    }

    pub fn active(&self, pm: &Pm) -> Result<bool, RegionError> {
        Ok(self.load_word(pm)?.1 != IDLE)
    }

    pub fn begin(&mut self, pm: &Pm) -> Result<(), RegionError> {
        let (generation, state) = self.load_word(pm)?;
        if state != IDLE {
            return Err(RegionError::Tx {
                what: "a transaction is already open on this region",
            });
        }
        self.used = 0;
        self.open.clear();
        // Not flushed yet: until the first entry is durable there is nothing to roll back,
        // so the state may reach the region before, with or after that entry.
        self.begin_unflushed = true;
        pm.mem.store(
            self.start + U_STATE,
            word(generation.wrapping_add(1) & (u64::MAX >> 2), ACTIVE),
        )
    }

    /// The entries of the log's current generation.
    fn entries(&self, pm: &Pm) -> Result<Vec<Entry>, RegionError> {
        let (generation, _) = self.load_word(pm)?;
        let mut out = Vec::new();
        let mut at = self.start + U_ENTRIES;
        let end = self.start + self.cap;
        while at + ENTRY_HEADER <= end {
            let head = pm.load(at)?;
            let (kind, len) = (head & 0xffff_ffff, head >> 32);
            let off = pm.load(at + 8)?;
            if pm.load(at + 16)? != generation
                || !(DATA..=FREE).contains(&kind)
                || at + ENTRY_HEADER + len.next_multiple_of(8) > end
                || checksum(pm, head, off, generation, at + ENTRY_HEADER, len)?
                    != pm.load(at + 24)?
            {
                break;
            }
            out.push(Entry {
                kind,
                len,
                off,
                data: at + ENTRY_HEADER,
            });
            at += (ENTRY_HEADER + len.next_multiple_of(8)).next_multiple_of(64);
        }
        Ok(out)
    }

    /// Appends one entry; durable once this returns.
    fn append(&mut self, pm: &Pm, kind: u64, off: u64, len: u64) -> Result<(), RegionError> {
        self.append_flushed(pm, kind, off, len)?;
        pm.drain();
        Ok(())
    }

    /// Appends one entry and flushes it; durable after the caller's next drain.
    fn append_flushed(
        &mut self,
        pm: &Pm,
        kind: u64,
        off: u64,
        len: u64,
    ) -> Result<(), RegionError> {
        let (generation, state) = self.load_word(pm)?;
        if state != ACTIVE {
            return Err(RegionError::Tx {
                what: "no transaction is open on this region",
            });
        }
        // Entries start on a cache line, so a small one is flushed as one line.
        let size = (ENTRY_HEADER + len.next_multiple_of(8)).next_multiple_of(64);
        if U_ENTRIES + self.used + size > self.cap {
            return Err(RegionError::UndoFull {
                cap: self.cap - U_ENTRIES,
            });
        }
        let at = self.start + U_ENTRIES + self.used;
        let data = at + ENTRY_HEADER;
        if kind == DATA {
            if !len.is_multiple_of(8) {
                pm.mem.store(data + len - len % 8, 0)?;
            }
            pm.mem.copy_within(off, data, len)?;
        }
        let head = kind | (len << 32);
        pm.mem.store(at, head)?;
        pm.mem.store(at + 8, off)?;
        pm.mem.store(at + 16, generation)?;
        pm.mem
            .store(at + 24, checksum(pm, head, off, generation, data, len)?)?;
        pm.flush(at, ENTRY_HEADER + len)?;
        if self.begin_unflushed {
            pm.flush(self.start + U_STATE, 8)?;
            self.begin_unflushed = false;
        }
        self.used += size;
        self.open.push(Entry {
            kind,
            len,
            off,
            data,
        });
        Ok(())
    }

    /// Saves `len` bytes at `off` before the caller changes them.
    pub fn add(&mut self, pm: &Pm, off: u64, len: u64) -> Result<(), RegionError> {
        if len > u64::from(u32::MAX) {
            return Err(RegionError::Invalid {
                what: format!("range of {len} bytes in one tx_add"),
            });
        }
        self.append(pm, DATA, off, len)
    }

    /// Logs an allocation about to be made. Only flushed: `Heap::commit` drains
    /// before the block's header says allocated, which is all the order needed.
    pub fn log_alloc(&mut self, pm: &Pm, block: u64) -> Result<(), RegionError> {
        self.append_flushed(pm, ALLOC, block, 0)
    }

    pub fn log_free(&mut self, pm: &Pm, block: u64) -> Result<(), RegionError> {
        self.append(pm, FREE, block, 0)
    }

    /// Makes every added range durable, then performs the deferred frees.
    pub fn commit(&mut self, pm: &Pm, heap: &mut Heap) -> Result<(), RegionError> {
        let (generation, state) = self.load_word(pm)?;
        if state != ACTIVE {
            return Err(RegionError::Tx {
                what: "commit without a transaction",
            });
        }
        let entries = std::mem::take(&mut self.open);
        for e in entries.iter().filter(|e| e.kind == DATA) {
            pm.flush(e.off, e.len)?;
        }
        pm.drain();
        let frees: Vec<u64> = entries
            .iter()
            .filter(|e| e.kind == FREE)
            .map(|e| e.off)
            .collect();
        if !frees.is_empty() {
            pm.store_persist(self.start + U_STATE, word(generation, COMMITTING))?;
            for block in frees {
                heap.free(pm, block, &[])?;
            }
        }
        pm.store_persist(self.start + U_STATE, word(generation, IDLE))
    }

    /// Restores every added range and frees what the transaction allocated.
    pub fn abort(&mut self, pm: &Pm, heap: &mut Heap) -> Result<(), RegionError> {
        if !self.active(pm)? {
            return Err(RegionError::Tx {
                what: "abort without a transaction",
            });
        }
        self.open.clear();
        self.roll_back(pm, Some(heap))
    }

    fn roll_back(&self, pm: &Pm, mut heap: Option<&mut Heap>) -> Result<(), RegionError> {
        let (generation, _) = self.load_word(pm)?;
        for e in self.entries(pm)?.iter().rev() {
            match e.kind {
                DATA => {
                    pm.mem.copy_within(e.data, e.off, e.len)?;
                    pm.flush(e.off, e.len)?;
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
        pm.drain();
        pm.store_persist(self.start + U_STATE, word(generation, IDLE))
    }

    /// Run at open, before the heap walk: rolls an interrupted transaction back,
    /// or finishes an interrupted commit.
    pub fn recover(&self, pm: &Pm) -> Result<Recovery, RegionError> {
        let (generation, state) = self.load_word(pm)?;
        match state {
            IDLE => Ok(Recovery::Nothing),
            ACTIVE => {
                self.roll_back(pm, None)?;
                Ok(Recovery::RolledBack)
            }
            COMMITTING => {
                for e in self.entries(pm)?.iter().filter(|e| e.kind == FREE) {
                    Heap::free_if_allocated(pm, e.off)?;
                }
                pm.store_persist(self.start + U_STATE, word(generation, IDLE))?;
                Ok(Recovery::FinishedCommit)
            }
            s => Err(RegionError::Corrupt {
                what: format!("undo log state {s}"),
            }),
        }
    }
}
