//! A mapped region with its persistence mode, and the allocator's redo log: a
//! group of 8-byte stores that either all happen or none does, even if the
//! process dies in the middle.

use crate::error::RegionError;
use crate::layout::{Mem, H_REDO_COUNT, H_REDO_ENTRIES, REDO_MAX};
use crate::persist::{drain, flush, ScmMode};

#[derive(Debug)]
pub struct Pm {
    pub mem: Mem,
    pub mode: ScmMode,
}

impl Pm {
    pub fn persist(&self, off: u64, len: u64) -> Result<(), RegionError> {
        if len == 0 {
            return Ok(());
        }
        self.flush(off, len)?;
        self.drain();
        Ok(())
    }

    /// Starts writing a range back; durable after [`Pm::drain`].
    pub fn flush(&self, off: u64, len: u64) -> Result<(), RegionError> {
        if len == 0 {
            return Ok(());
        }
        if !self.mem.contains(off, len) {
            return Err(RegionError::Corrupt {
                what: format!("flush of {len} bytes at {off}"),
            });
        }
        let addr = self.mem.ptr_at(off).expect("contains() checked the range");
        flush(self.mode, self.mem.base(), addr, len as usize)
    }

    /// Waits for the flushes before it (one persist point).
    pub fn drain(&self) {
        drain(self.mode)
    }

    pub fn load(&self, off: u64) -> Result<u64, RegionError> {
        self.mem.load(off)
    }

    /// One store, made durable.
    pub fn store_persist(&self, off: u64, value: u64) -> Result<(), RegionError> {
        self.mem.store(off, value)?;
        self.persist(off, 8)
    }

    /// Applies `stores` atomically with respect to a crash: one store goes directly
    /// (8-byte stores are atomic); several go through the redo log.
    pub fn atomic_stores(&self, stores: &[(u64, u64)]) -> Result<(), RegionError> {
        match stores {
            [] => Ok(()),
            [(off, value)] => self.store_persist(*off, *value),
            _ => self.redo(stores),
        }
    }

    fn redo(&self, stores: &[(u64, u64)]) -> Result<(), RegionError> {
        if stores.len() > REDO_MAX {
            return Err(RegionError::Invalid {
                what: format!("{} stores in one redo record", stores.len()),
            });
        }
        for (i, (off, value)) in stores.iter().enumerate() {
            // Refuse before the commit point anything replay could not apply.
            if off % 8 != 0 || !self.mem.contains(*off, 8) {
                return Err(RegionError::Corrupt {
                    what: format!("redo store to {off}"),
                });
            }
            let entry = H_REDO_ENTRIES + 16 * i as u64;
            self.mem.store(entry, *off)?;
            self.mem.store(entry + 8, *value)?;
        }
        self.persist(H_REDO_ENTRIES, 16 * stores.len() as u64)?;
        // The commit point: from here on, recovery finishes the group.
        self.store_persist(H_REDO_COUNT, stores.len() as u64)?;
        self.apply_redo(stores.len() as u64)
    }

    fn apply_redo(&self, count: u64) -> Result<(), RegionError> {
        for i in 0..count {
            let entry = H_REDO_ENTRIES + 16 * i;
            let (off, value) = (self.mem.load(entry)?, self.mem.load(entry + 8)?);
            self.mem.store(off, value)?;
            self.flush(off, 8)?;
        }
        self.drain();
        self.store_persist(H_REDO_COUNT, 0)
    }

    /// Finishes a redo group a crash interrupted. Replaying is idempotent.
    pub fn recover_redo(&self) -> Result<bool, RegionError> {
        let count = self.mem.load(H_REDO_COUNT)?;
        if count == 0 {
            return Ok(false);
        }
        if count > REDO_MAX as u64 {
            return Err(RegionError::Corrupt {
                what: format!("redo log count {count}"),
            });
        }
        self.apply_redo(count)?;
        Ok(true)
    }
}
