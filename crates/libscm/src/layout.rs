//! Where things live inside a region file, and bounds-checked access to the
//! mapped bytes. Everything stored in a region is an offset from its start,
//! never a pointer: the region may be mapped at another address next time.
//!
//! ```text
//! 0        header page: magic, version, size, clean flag, root, heap and undo bounds,
//!          the allocator's redo log
//! 4096     undo log of the transaction in flight (state, used, entries)
//! heap     blocks: [u64 size|ALLOCATED][u64 reserved][payload…], 16-byte aligned
//! ```

use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::RegionError;

pub const MAGIC: u64 = u64::from_le_bytes(*b"MEMEXSCM");
pub const VERSION: u64 = 1;

pub const PAGE: u64 = 4096;
pub const ALIGN: u64 = 16;
/// Block header size; the payload starts this far into a block.
pub const BLOCK_HEADER: u64 = 16;
/// The smallest block: a header plus room for a free block's two list links and
/// its footer (its size, in its last word, for merging with the block after it).
pub const MIN_BLOCK: u64 = 48;
pub const ALLOCATED: u64 = 1;

// Header fields (byte offsets).
pub const H_MAGIC: u64 = 0;
pub const H_VERSION: u64 = 8;
pub const H_SIZE: u64 = 16;
pub const H_CLEAN: u64 = 24;
pub const H_ROOT: u64 = 32;
pub const H_ROOT_SIZE: u64 = 40;
pub const H_HEAP_START: u64 = 48;
pub const H_HEAP_END: u64 = 56;
pub const H_UNDO_START: u64 = 64;
pub const H_UNDO_CAP: u64 = 72;
/// Redo log: count (0 = empty) then up to `REDO_MAX` (offset, value) pairs.
pub const H_REDO_COUNT: u64 = 128;
pub const H_REDO_ENTRIES: u64 = 136;
pub const REDO_MAX: usize = 8;

// Undo log: one word of generation and state (relative to undo start), then
// entries from `U_ENTRIES`.
pub const U_STATE: u64 = 0;
pub const U_ENTRIES: u64 = 64;

/// The smallest region memext formats: header page, minimum undo log, one heap page.
pub const MIN_REGION: u64 = PAGE + MIN_UNDO + PAGE;
const MIN_UNDO: u64 = 64 * 1024;
const MAX_UNDO: u64 = 16 * 1024 * 1024;

pub fn align_up(v: u64, a: u64) -> Option<u64> {
    v.checked_add(a - 1).map(|x| x & !(a - 1))
}

/// The geometry a fresh region of `size` bytes gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    pub size: u64,
    pub undo_start: u64,
    pub undo_cap: u64,
    pub heap_start: u64,
    pub heap_end: u64,
}

impl Geometry {
    pub fn for_size(size: u64) -> Result<Self, RegionError> {
        if size < MIN_REGION {
            return Err(RegionError::TooSmall {
                size,
                min: MIN_REGION,
            });
        }
        let undo_cap = (size / 16).clamp(MIN_UNDO, MAX_UNDO) & !(PAGE - 1);
        let heap_start = PAGE + undo_cap;
        let heap_end = size & !(ALIGN - 1);
        if heap_end < heap_start + PAGE {
            return Err(RegionError::TooSmall {
                size,
                min: MIN_REGION,
            });
        }
        Ok(Self {
            size,
            undo_start: PAGE,
            undo_cap,
            heap_start,
            heap_end,
        })
    }

    /// Checks a geometry read back from a region against the file it is in.
    pub fn validate(self, file_size: u64) -> Result<Self, RegionError> {
        let ok = self.size == file_size
            && self.undo_start == PAGE
            && self.undo_cap >= U_ENTRIES
            && self.heap_start == self.undo_start.saturating_add(self.undo_cap)
            && self.heap_start.is_multiple_of(ALIGN)
            && self.heap_end.is_multiple_of(ALIGN)
            && self.heap_start < self.heap_end
            && self.heap_end <= file_size;
        if ok {
            Ok(self)
        } else {
            Err(RegionError::Corrupt {
                what: format!("header geometry {self:?} for a file of {file_size} bytes"),
            })
        }
    }
}

/// The mapped bytes of a region. All offsets are checked against its length.
#[derive(Debug)]
pub struct Mem {
    base: *mut u8,
    len: u64,
}

// SAFETY: Mem is a plain address range of a shared mapping; concurrent access is
// serialised by the region's mutex, and the mapping outlives every Mem (see Region).
unsafe impl Send for Mem {}
// SAFETY: as above.
unsafe impl Sync for Mem {}

impl Mem {
    /// # Safety
    /// `base..base+len` must be a live mapping, writable, 8-byte aligned, that
    /// outlives this value.
    pub unsafe fn new(base: *mut u8, len: u64) -> Self {
        Self { base, len }
    }

    pub fn base(&self) -> *mut u8 {
        self.base
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn contains(&self, off: u64, len: u64) -> bool {
        off.checked_add(len).is_some_and(|end| end <= self.len)
    }

    fn word(&self, off: u64) -> Result<&AtomicU64, RegionError> {
        if !off.is_multiple_of(8) || !self.contains(off, 8) {
            return Err(RegionError::Corrupt {
                what: format!("word offset {off} outside the region"),
            });
        }
        let off = usize::try_from(off).map_err(|_| RegionError::Corrupt {
            what: format!("offset {off}"),
        })?;
        // SAFETY: off is 8-aligned and off+8 <= len, inside the live mapping (Mem::new's
        // contract); AtomicU64 has the layout of u64 and every bit pattern is valid.
        Ok(unsafe { &*(self.base.add(off) as *const AtomicU64) })
    }

    pub fn load(&self, off: u64) -> Result<u64, RegionError> {
        Ok(self.word(off)?.load(Ordering::Acquire))
    }

    /// One 8-byte store: either the old or the new value survives a crash, never a mix.
    pub fn store(&self, off: u64, value: u64) -> Result<(), RegionError> {
        self.word(off)?.store(value, Ordering::Release);
        Ok(())
    }

    /// Copies `len` bytes inside the region (ranges may not overlap).
    pub fn copy_within(&self, from: u64, to: u64, len: u64) -> Result<(), RegionError> {
        if !self.contains(from, len) || !self.contains(to, len) || from.abs_diff(to) < len {
            return Err(RegionError::Corrupt {
                what: format!("copy of {len} bytes {from} -> {to}"),
            });
        }
        // SAFETY: both ranges lie inside the mapping and do not overlap (checked above).
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.base.add(from as usize),
                self.base.add(to as usize),
                len as usize,
            )
        };
        Ok(())
    }

    /// The offset of `ptr` if it points into the region.
    pub fn offset_of(&self, ptr: *const u8) -> Option<u64> {
        let p = ptr as usize;
        let b = self.base as usize;
        (p >= b && ((p - b) as u64) < self.len).then(|| (p - b) as u64)
    }

    /// The address of `off`, which must be inside the region.
    pub fn ptr_at(&self, off: u64) -> Option<*mut u8> {
        // SAFETY: off < len, so the result stays inside the mapping.
        (off < self.len).then(|| unsafe { self.base.add(off as usize) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_leaves_room_for_a_heap_and_validates_against_its_file() {
        let g = Geometry::for_size(64 << 20).expect("64 MiB is large enough");
        assert_eq!(g.undo_cap, 4 << 20);
        assert_eq!(g.heap_start, PAGE + (4 << 20));
        assert!(g.validate(64 << 20).is_ok());
        assert!(
            g.validate(32 << 20).is_err(),
            "a header claiming more than the file is corrupt"
        );
        assert!(Geometry::for_size(MIN_REGION - 1).is_err());
        assert!(Geometry::for_size(MIN_REGION).is_ok());
    }

    #[test]
    fn mem_refuses_offsets_outside_the_region() {
        let mut buf = vec![0u64; 8];
        // SAFETY: buf is a live, aligned 64-byte allocation that outlives mem.
        let mem = unsafe { Mem::new(buf.as_mut_ptr().cast(), 64) };
        mem.store(56, 7).expect("last word is inside");
        assert_eq!(mem.load(56).expect("inside"), 7);
        assert!(mem.load(60).is_err(), "unaligned");
        assert!(mem.load(64).is_err(), "past the end");
        assert!(mem.store(u64::MAX - 3, 1).is_err(), "overflowing");
        assert!(mem.copy_within(0, 8, 16).is_err(), "overlapping copy");
        mem.copy_within(56, 0, 8).expect("disjoint copy");
        assert_eq!(mem.load(0).expect("inside"), 7);
    }
}
