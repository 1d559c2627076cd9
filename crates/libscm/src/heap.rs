//! The persistent allocator. What persists is only the block headers (size and
//! an allocated bit, one atomic word each); the free lists and the map of
//! allocated blocks are volatile and rebuilt by walking the heap at open.
//!
//! Crash consistency: a split writes the remainder's header inside the block
//! being split before the block's own header shrinks, so a crash leaves either
//! the old block or both; an allocation that also publishes its offset, or a
//! free that also clears one, goes through the redo log (`Pm::atomic_stores`).
//! Merging grows one header by one store; the absorbed header is then dead.
//! A free block also carries its size in its last word (a footer), so a freed
//! block can find and merge with a free block just before it.

use crate::error::RegionError;
use crate::layout::{align_up, ALIGN, ALLOCATED, BLOCK_HEADER, MIN_BLOCK};
use crate::pm::Pm;

const CLASSES: usize = 64;
/// Blocks looked at in the exact size class before taking a larger one.
const FIRST_FIT_SCAN: usize = 16;
const LINK_PREV: u64 = 16;
const LINK_NEXT: u64 = 24;

#[derive(Debug)]
pub struct Heap {
    start: u64,
    end: u64,
    /// Head of each size class's free list (0: empty). Class = floor(log2(size)).
    bins: [u64; CLASSES],
    /// One bit per 16-byte granule: set where an allocated block starts.
    allocated: Vec<u64>,
    /// One bit per 16-byte granule: set where a free block on the free lists starts.
    free_starts: Vec<u64>,
    free_bytes: u64,
}

/// What a heap walk found.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct HeapStats {
    pub blocks: u64,
    pub allocated_blocks: u64,
    pub free_bytes: u64,
}

fn class(size: u64) -> usize {
    (63 - size.leading_zeros()) as usize
}

impl Heap {
    /// Walks the heap, checking that blocks tile it exactly, merging neighbouring
    /// free blocks, and builds the volatile state.
    pub fn open(pm: &Pm, start: u64, end: u64) -> Result<Self, RegionError> {
        let granules = (end - start) / ALIGN;
        let mut heap = Self {
            start,
            end,
            bins: [0; CLASSES],
            allocated: vec![0; granules.div_ceil(64) as usize],
            free_starts: vec![0; granules.div_ceil(64) as usize],
            free_bytes: 0,
        };
        let mut off = start;
        while off < end {
            let (size, is_allocated) = heap.header(pm, off)?;
            if is_allocated {
                heap.mark(off, true);
                off += size;
                continue;
            }
            let mut merged = size;
            while off + merged < end {
                let (next, next_allocated) = heap.header(pm, off + merged)?;
                if next_allocated {
                    break;
                }
                merged += next;
            }
            if merged != size {
                pm.store_persist(off, merged)?;
            }
            heap.insert_free(pm, off, merged)?;
            off += merged;
        }
        Ok(heap)
    }

    /// Formats a fresh heap: one free block over all of it.
    pub fn format(pm: &Pm, start: u64, end: u64) -> Result<(), RegionError> {
        pm.mem.store(start + 8, 0)?;
        pm.store_persist(start, end - start)
    }

    fn header(&self, pm: &Pm, off: u64) -> Result<(u64, bool), RegionError> {
        let h = pm.load(off)?;
        let size = h & !(ALIGN - 1);
        if h & (ALIGN - 1) & !ALLOCATED != 0 || size < MIN_BLOCK || off + size > self.end {
            return Err(RegionError::Corrupt {
                what: format!("block header {h:#x} at {off}"),
            });
        }
        Ok((size, h & ALLOCATED != 0))
    }

    fn granule(&self, off: u64) -> (usize, u64) {
        let g = (off - self.start) / ALIGN;
        ((g / 64) as usize, 1u64 << (g % 64))
    }

    fn mark(&mut self, block: u64, on: bool) {
        let (word, bit) = self.granule(block);
        if on {
            self.allocated[word] |= bit;
        } else {
            self.allocated[word] &= !bit;
        }
    }

    fn is_free_start(&self, block: u64) -> bool {
        let (word, bit) = self.granule(block);
        self.free_starts[word] & bit != 0
    }

    fn set_free_start(&mut self, block: u64, on: bool) {
        let (word, bit) = self.granule(block);
        if on {
            self.free_starts[word] |= bit;
        } else {
            self.free_starts[word] &= !bit;
        }
    }

    /// The free block that ends exactly at `block`, if there is one. Its footer
    /// gives a candidate start, which counts only if a free block starts there and
    /// its header's size reaches `block` (so user data in an allocated block before
    /// `block` can never fake one).
    fn free_block_before(&self, pm: &Pm, block: u64) -> Result<Option<(u64, u64)>, RegionError> {
        if block < self.start + MIN_BLOCK {
            return Ok(None);
        }
        let size = pm.load(block - 8)?;
        let Some(prev) = block.checked_sub(size) else {
            return Ok(None);
        };
        if size < MIN_BLOCK || size % ALIGN != 0 || prev < self.start || !self.is_free_start(prev) {
            return Ok(None);
        }
        let (prev_size, allocated) = self.header(pm, prev)?;
        Ok((!allocated && prev_size == size).then_some((prev, size)))
    }

    /// The block whose payload starts at `payload`, if it is an allocated block.
    pub fn allocated_block(&self, payload: u64) -> Option<u64> {
        let block = payload.checked_sub(BLOCK_HEADER)?;
        if block < self.start || block >= self.end || block % ALIGN != 0 {
            return None;
        }
        let (word, bit) = self.granule(block);
        (self.allocated[word] & bit != 0).then_some(block)
    }

    /// The payload size of an allocated block.
    pub fn payload_size(&self, pm: &Pm, block: u64) -> Result<u64, RegionError> {
        Ok(self.header(pm, block)?.0 - BLOCK_HEADER)
    }

    pub fn free_bytes(&self) -> u64 {
        self.free_bytes
    }

    fn insert_free(&mut self, pm: &Pm, block: u64, size: u64) -> Result<(), RegionError> {
        let c = class(size);
        let head = self.bins[c];
        pm.mem.store(block + LINK_PREV, 0)?;
        pm.mem.store(block + LINK_NEXT, head)?;
        pm.mem.store(block + size - 8, size)?;
        if head != 0 {
            pm.mem.store(head + LINK_PREV, block)?;
        }
        self.bins[c] = block;
        self.set_free_start(block, true);
        self.free_bytes += size;
        Ok(())
    }

    fn remove_free(&mut self, pm: &Pm, block: u64, size: u64) -> Result<(), RegionError> {
        let prev = pm.load(block + LINK_PREV)?;
        let next = pm.load(block + LINK_NEXT)?;
        if prev == 0 {
            self.bins[class(size)] = next;
        } else {
            pm.mem.store(prev + LINK_NEXT, next)?;
        }
        if next != 0 {
            pm.mem.store(next + LINK_PREV, prev)?;
        }
        self.set_free_start(block, false);
        self.free_bytes -= size;
        Ok(())
    }

    /// Block size needed for a payload of `size` bytes.
    pub fn block_size(size: u64) -> Option<u64> {
        align_up(size.checked_add(BLOCK_HEADER)?, ALIGN).map(|s| s.max(MIN_BLOCK))
    }

    /// Takes a free block of at least `need` bytes off the free lists (volatile only;
    /// [`Heap::commit`] makes it allocated, [`Heap::unreserve`] gives it back).
    pub fn reserve(&mut self, pm: &Pm, need: u64) -> Result<(u64, u64), RegionError> {
        let c = class(need);
        let mut cur = self.bins[c];
        for _ in 0..FIRST_FIT_SCAN {
            if cur == 0 {
                break;
            }
            let (size, _) = self.header(pm, cur)?;
            if size >= need {
                self.remove_free(pm, cur, size)?;
                return Ok((cur, size));
            }
            cur = pm.load(cur + LINK_NEXT)?;
        }
        for bin in c + 1..CLASSES {
            let head = self.bins[bin];
            if head != 0 {
                let (size, _) = self.header(pm, head)?;
                self.remove_free(pm, head, size)?;
                return Ok((head, size));
            }
        }
        Err(RegionError::Full { need })
    }

    pub fn unreserve(&mut self, pm: &Pm, block: u64, size: u64) -> Result<(), RegionError> {
        self.insert_free(pm, block, size)
    }

    /// Makes a reserved block allocated, splitting off what it does not need, and
    /// performs `publish` (offset, value) stores in the same crash-atomic step; a
    /// value of `u64::MAX` stands for the new payload's offset. `pending` says the
    /// caller has flushed something that must be durable before the block is
    /// allocated (a transaction's log entry); one drain serves both.
    pub fn commit(
        &mut self,
        pm: &Pm,
        (block, size): (u64, u64),
        need: u64,
        publish: &[(u64, u64)],
        pending: bool,
    ) -> Result<u64, RegionError> {
        let payload = block + BLOCK_HEADER;
        let mut kept = size;
        if size - need >= MIN_BLOCK {
            let rest = block + need;
            pm.mem.store(rest + 8, 0)?;
            pm.store_persist(rest, size - need)?;
            self.insert_free(pm, rest, size - need)?;
            kept = need;
        } else if pending {
            pm.drain();
        }
        let mut stores = Vec::with_capacity(publish.len() + 1);
        stores.push((block, kept | ALLOCATED));
        stores.extend(
            publish
                .iter()
                .map(|&(o, v)| (o, if v == u64::MAX { payload } else { v })),
        );
        pm.atomic_stores(&stores)?;
        self.mark(block, true);
        Ok(payload)
    }

    /// Frees an allocated block, performing `clear` stores in the same crash-atomic
    /// step, then merges it with the free blocks around it.
    pub fn free(&mut self, pm: &Pm, block: u64, clear: &[(u64, u64)]) -> Result<(), RegionError> {
        let (size, allocated) = self.header(pm, block)?;
        if !allocated {
            return Err(RegionError::Invalid {
                what: format!("block {block} is already free"),
            });
        }
        let mut stores = vec![(block, size)];
        stores.extend_from_slice(clear);
        pm.atomic_stores(&stores)?;
        self.mark(block, false);
        let (block, mut size) = match self.free_block_before(pm, block)? {
            // A merge is one store that needs no fence of its own: the absorbed block
            // is durably free already, so the store may reach the region whenever.
            Some((prev, prev_size)) => {
                self.remove_free(pm, prev, prev_size)?;
                pm.mem.store(prev, prev_size + size)?;
                pm.flush(prev, 8)?;
                (prev, prev_size + size)
            }
            None => (block, size),
        };
        while block + size < self.end {
            let next = block + size;
            let (next_size, next_allocated) = self.header(pm, next)?;
            if next_allocated {
                break;
            }
            self.remove_free(pm, next, next_size)?;
            size += next_size;
            pm.mem.store(block, size)?;
            pm.flush(block, 8)?;
        }
        self.insert_free(pm, block, size)
    }

    /// Frees `block` during recovery if it is still allocated (idempotent).
    pub fn free_if_allocated(pm: &Pm, block: u64) -> Result<(), RegionError> {
        let h = pm.load(block)?;
        if h & ALLOCATED != 0 {
            pm.store_persist(block, h & !ALLOCATED)?;
        }
        Ok(())
    }

    /// Walks the heap without changing it and checks it against the volatile state.
    pub fn check(&self, pm: &Pm) -> Result<HeapStats, RegionError> {
        let mut stats = HeapStats::default();
        let mut off = self.start;
        while off < self.end {
            let (size, allocated) = self.header(pm, off)?;
            let (word, bit) = self.granule(off);
            if allocated != (self.allocated[word] & bit != 0) {
                return Err(RegionError::Corrupt {
                    what: format!("block {off}: header and allocation map disagree"),
                });
            }
            stats.blocks += 1;
            if allocated {
                stats.allocated_blocks += 1;
            } else {
                stats.free_bytes += size;
            }
            off += size;
        }
        if off != self.end {
            return Err(RegionError::Corrupt {
                what: format!("blocks end at {off}, heap at {}", self.end),
            });
        }
        if stats.free_bytes != self.free_bytes {
            return Err(RegionError::Corrupt {
                what: format!(
                    "{} free bytes in the heap, {} on the free lists",
                    stats.free_bytes, self.free_bytes
                ),
            });
        }
        Ok(stats)
    }
}
