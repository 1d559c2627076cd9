//! One open region: its mapping, its recovery at open, and the operations the
//! C ABI exposes (allocate, free, root object, persist, sync, transactions).
//! Every operation takes the region's lock; a transaction belongs to the
//! thread that began it.
//!
//! Kept whole (~540 lines): recovery at open, the allocator's redo log and the
//! transaction's undo log act on the same mapping under the same lock, and
//! their invariants are checked against each other; split, each half would
//! read only with the other open beside it.

use std::collections::HashSet;
use std::fs::File;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use crate::error::{invalid, RegionError};
use crate::heap::{Heap, HeapStats};
use crate::layout::*;
use crate::persist::{persist_point, ScmMode};
use crate::pm::Pm;
use crate::tx::{Recovery, UndoLog};

/// A thread, by its kernel id.
type ThreadId = i32;

thread_local! {
    // Const-initialised and without a destructor, so it can be read even while the
    // thread's other thread-locals are being destroyed (a program's free() at exit).
    static THREAD: std::cell::Cell<ThreadId> = const { std::cell::Cell::new(0) };
}

/// This thread's kernel id, asked of the kernel once per thread.
fn this_thread() -> ThreadId {
    THREAD.with(|t| {
        if t.get() == 0 {
            t.set(rustix::thread::gettid().as_raw_nonzero().get());
        }
        t.get()
    })
}

const TMPFS_MAGIC: i64 = 0x0102_1994;
const RAMFS_MAGIC: i64 = 0x8584_58f6;

#[derive(Debug)]
pub struct Region {
    pm: Pm,
    _file: File,
    geometry: Geometry,
    was_clean: bool,
    recovery: Recovery,
    inner: Mutex<Inner>,
}

#[derive(Debug)]
struct Inner {
    heap: Heap,
    undo: UndoLog,
    tx_owner: Option<ThreadId>,
    tx_frees: HashSet<u64>,
}

/// What `scm_region_info` reports.
#[derive(Debug, Clone, Copy)]
pub struct RegionFacts {
    pub size: u64,
    pub heap_size: u64,
    pub free_bytes: u64,
    pub mode: ScmMode,
    pub was_clean: bool,
    pub recovery: Recovery,
}

fn io(op: &'static str) -> impl FnOnce(std::io::Error) -> RegionError {
    move |source| RegionError::Io { op, source }
}

/// Opens or creates a region file by host path (never following a symlink).
pub fn open_path(path: &Path, size: u64, create: bool) -> Result<File, RegionError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(create)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|source| RegionError::Path {
            op: "open",
            path: path.to_path_buf(),
            source,
        })?;
    let len = file.metadata().map_err(io("fstat"))?.len();
    if len == 0 && size > 0 {
        // fallocate reserves the space now, so a full disk fails here, not at a later store.
        if let Err(e) = rustix::fs::fallocate(&file, rustix::fs::FallocateFlags::empty(), 0, size) {
            if e != rustix::io::Errno::OPNOTSUPP {
                return Err(RegionError::Io {
                    op: "fallocate",
                    source: e.into(),
                });
            }
            file.set_len(size).map_err(io("ftruncate"))?;
        }
    }
    Ok(file)
}

impl Region {
    /// Maps a region file, formatting it if it is new (all zero), recovering it
    /// otherwise.
    pub fn open(fd: OwnedFd, size_wanted: u64) -> Result<Self, RegionError> {
        let file = File::from(fd);
        let meta = file.metadata().map_err(io("fstat"))?;
        if !meta.is_file() {
            return Err(invalid("the region descriptor is not a regular file"));
        }
        let len = meta.len();
        if len == 0 {
            return Err(invalid("empty region file: give a size to create it"));
        }
        if size_wanted > len {
            return Err(invalid(format!(
                "region is {len} bytes, {size_wanted} asked for"
            )));
        }
        let (base, mode) = map(&file, len)?;
        // SAFETY: base..base+len is the mapping just made; Region unmaps it in Drop,
        // after the last use of `pm`.
        let mem = unsafe { Mem::new(base, len) };
        let pm = Pm { mem, mode };
        let result = Self::attach(pm, file, len);
        if result.is_err() {
            // SAFETY: the mapping was made above and nothing refers to it any more.
            unsafe { libc::munmap(base.cast(), len as usize) };
        }
        result
    }

    fn attach(pm: Pm, file: File, len: u64) -> Result<Self, RegionError> {
        let magic = pm.load(H_MAGIC)?;
        if magic == 0 {
            format(&pm, len)?;
        } else if magic != MAGIC {
            return Err(RegionError::NotARegion { magic });
        }
        let version = pm.load(H_VERSION)?;
        if version != VERSION {
            return Err(RegionError::Version {
                found: version,
                expected: VERSION,
            });
        }
        let geometry = Geometry {
            size: pm.load(H_SIZE)?,
            undo_start: pm.load(H_UNDO_START)?,
            undo_cap: pm.load(H_UNDO_CAP)?,
            heap_start: pm.load(H_HEAP_START)?,
            heap_end: pm.load(H_HEAP_END)?,
        }
        .validate(len)?;
        let was_clean = pm.load(H_CLEAN)? == 1;
        pm.store_persist(H_CLEAN, 0)?;
        pm.recover_redo()?;
        let undo = UndoLog::new(geometry.undo_start, geometry.undo_cap);
        let recovery = undo.recover(&pm)?;
        let heap = Heap::open(&pm, geometry.heap_start, geometry.heap_end)?;
        let inner = Mutex::new(Inner {
            heap,
            undo,
            tx_owner: None,
            tx_frees: HashSet::new(),
        });
        Ok(Self {
            pm,
            _file: file,
            geometry,
            was_clean,
            recovery,
            inner,
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock is caught at the ABI boundary; the region's
        // persistent state is still consistent (that is what the logs are for).
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn mem(&self) -> &Mem {
        &self.pm.mem
    }

    pub fn mode(&self) -> ScmMode {
        self.pm.mode
    }

    fn in_heap(&self, off: u64, len: u64) -> bool {
        off >= self.geometry.heap_start
            && off
                .checked_add(len)
                .is_some_and(|e| e <= self.geometry.heap_end)
    }

    /// The offset of `ptr` if `len` bytes from it lie in the heap.
    pub fn heap_offset(&self, ptr: *const u8, len: u64) -> Result<u64, RegionError> {
        match self.pm.mem.offset_of(ptr) {
            Some(off) if self.in_heap(off, len) => Ok(off),
            _ => Err(invalid(format!(
                "{len} bytes at {ptr:p} are not inside this region's heap"
            ))),
        }
    }

    fn owns_tx(inner: &Inner) -> bool {
        inner.tx_owner == Some(this_thread())
    }

    /// Allocates `size` bytes; if `dest` is given (an offset in the heap), the new
    /// object's offset is stored there in the same crash-atomic step.
    pub fn alloc(&self, size: u64, dest: Option<u64>) -> Result<u64, RegionError> {
        if size == 0 {
            return Err(invalid("allocation of 0 bytes"));
        }
        if let Some(d) = dest {
            if d % 8 != 0 || !self.in_heap(d, 8) {
                return Err(invalid(format!(
                    "publish location {d} is not an aligned heap word"
                )));
            }
        }
        let need =
            Heap::block_size(size).ok_or_else(|| invalid(format!("allocation of {size} bytes")))?;
        let inner = &mut *self.lock();
        let reserved = inner.heap.reserve(&self.pm, need)?;
        let in_tx = Self::owns_tx(inner);
        if in_tx {
            if let Err(e) = inner.undo.log_alloc(&self.pm, reserved.0) {
                inner.heap.unreserve(&self.pm, reserved.0, reserved.1)?;
                return Err(e);
            }
        }
        let publish: Vec<(u64, u64)> = dest.iter().map(|&d| (d, u64::MAX)).collect();
        inner.heap.commit(&self.pm, reserved, need, &publish, in_tx)
    }

    /// Frees the object at payload offset `off`; if `clear` is given, that word is
    /// zeroed in the same crash-atomic step. Inside this thread's transaction the
    /// free happens at commit.
    pub fn free(&self, off: u64, clear: Option<u64>) -> Result<(), RegionError> {
        if let Some(c) = clear {
            if c % 8 != 0 || !self.in_heap(c, 8) {
                return Err(invalid(format!("location {c} is not an aligned heap word")));
            }
        }
        let inner = &mut *self.lock();
        let block = inner
            .heap
            .allocated_block(off)
            .ok_or_else(|| invalid(format!("{off} is not an allocated object")))?;
        if Self::owns_tx(inner) {
            if !inner.tx_frees.insert(block) {
                return Err(invalid(format!(
                    "object {off} freed twice in one transaction"
                )));
            }
            if let Some(c) = clear {
                inner.undo.add(&self.pm, c, 8)?;
                self.pm.mem.store(c, 0)?;
            }
            return inner.undo.log_free(&self.pm, block);
        }
        let stores: Vec<(u64, u64)> = clear.iter().map(|&c| (c, 0)).collect();
        inner.heap.free(&self.pm, block, &stores)
    }

    /// The root object: allocated zeroed on first use, the same object afterwards.
    pub fn root(&self, size: u64) -> Result<u64, RegionError> {
        let inner = &mut *self.lock();
        let root = self.pm.load(H_ROOT)?;
        if root != 0 {
            let have = self.pm.load(H_ROOT_SIZE)?;
            return if size <= have {
                Ok(root)
            } else {
                Err(invalid(format!("root is {have} bytes, {size} asked for")))
            };
        }
        if size == 0 {
            return Err(invalid("root of 0 bytes"));
        }
        let need =
            Heap::block_size(size).ok_or_else(|| invalid(format!("root of {size} bytes")))?;
        let (block, bsize) = inner.heap.reserve(&self.pm, need)?;
        let payload = block + BLOCK_HEADER;
        let ptr = self
            .pm
            .mem
            .ptr_at(payload)
            .expect("a reserved block is inside the region");
        // SAFETY: the payload of a reserved block is need - BLOCK_HEADER >= size bytes of
        // the mapping that nothing else uses (it is off the free lists and not allocated).
        unsafe { std::ptr::write_bytes(ptr, 0, size as usize) };
        self.pm.persist(payload, size)?;
        inner.heap.commit(
            &self.pm,
            (block, bsize),
            need,
            &[(H_ROOT, u64::MAX), (H_ROOT_SIZE, size)],
            false,
        )
    }

    pub fn persist(&self, off: u64, len: u64) -> Result<(), RegionError> {
        self.pm.persist(off, len)
    }

    /// Makes every store to the region durable.
    pub fn sync(&self) -> Result<(), RegionError> {
        if self.pm.mode == ScmMode::SCM_MODE_MSYNC {
            // SAFETY: the whole mapping, live for the region's lifetime.
            let rc = unsafe {
                libc::msync(
                    self.pm.mem.base().cast(),
                    self.pm.mem.len() as usize,
                    libc::MS_SYNC,
                )
            };
            if rc != 0 {
                return Err(RegionError::Io {
                    op: "msync",
                    source: std::io::Error::last_os_error(),
                });
            }
            persist_point();
            Ok(())
        } else {
            self.pm.persist(H_MAGIC, 8)
        }
    }

    pub fn tx_begin(&self) -> Result<(), RegionError> {
        let inner = &mut *self.lock();
        if inner.tx_owner.is_some() {
            return Err(RegionError::Tx {
                what: "a transaction is already open on this region",
            });
        }
        inner.undo.begin(&self.pm)?;
        inner.tx_owner = Some(this_thread());
        Ok(())
    }

    fn owned_tx(&self) -> Result<MutexGuard<'_, Inner>, RegionError> {
        let inner = self.lock();
        if !Self::owns_tx(&inner) {
            return Err(RegionError::Tx {
                what: "this thread has no transaction open on this region",
            });
        }
        Ok(inner)
    }

    pub fn tx_add(&self, off: u64, len: u64) -> Result<(), RegionError> {
        if len == 0 || !self.in_heap(off, len) {
            return Err(invalid(format!(
                "tx_add of {len} bytes at {off} outside the heap"
            )));
        }
        let mut inner = self.owned_tx()?;
        inner.undo.add(&self.pm, off, len)
    }

    pub fn tx_end(&self, commit: bool) -> Result<(), RegionError> {
        let mut guard = self.owned_tx()?;
        let inner = &mut *guard;
        let result = if commit {
            inner.undo.commit(&self.pm, &mut inner.heap)
        } else {
            inner.undo.abort(&self.pm, &mut inner.heap)
        };
        inner.tx_owner = None;
        inner.tx_frees.clear();
        result
    }

    /// Checks the region's persistent state: logs settled, blocks tiling the heap,
    /// the root inside an allocated object.
    pub fn check(&self) -> Result<HeapStats, RegionError> {
        let inner = self.lock();
        if self.pm.load(H_REDO_COUNT)? != 0 {
            return Err(RegionError::Corrupt {
                what: "redo log not empty".into(),
            });
        }
        if inner.tx_owner.is_none() && inner.undo.active(&self.pm)? {
            return Err(RegionError::Corrupt {
                what: "undo log active with no transaction open".into(),
            });
        }
        let stats = inner.heap.check(&self.pm)?;
        let root = self.pm.load(H_ROOT)?;
        if root != 0 && inner.heap.allocated_block(root).is_none() {
            return Err(RegionError::Corrupt {
                what: format!("root {root} is not an allocated object"),
            });
        }
        Ok(stats)
    }

    pub fn facts(&self) -> RegionFacts {
        RegionFacts {
            size: self.geometry.size,
            heap_size: self.geometry.heap_end - self.geometry.heap_start,
            free_bytes: self.lock().heap.free_bytes(),
            mode: self.pm.mode,
            was_clean: self.was_clean,
            recovery: self.recovery,
        }
    }

    /// The payload size of the allocated object at `off`.
    pub fn object_size(&self, off: u64) -> Result<u64, RegionError> {
        let inner = self.lock();
        let block = inner
            .heap
            .allocated_block(off)
            .ok_or_else(|| invalid(format!("{off} is not an allocated object")))?;
        inner.heap.payload_size(&self.pm, block)
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        let clean = self.lock().tx_owner.is_none();
        if clean
            && self.pm.store_persist(H_CLEAN, 1).is_ok()
            && self.pm.mode == ScmMode::SCM_MODE_MSYNC
        {
            // SAFETY: the whole mapping, still live.
            unsafe {
                libc::msync(
                    self.pm.mem.base().cast(),
                    self.pm.mem.len() as usize,
                    libc::MS_SYNC,
                )
            };
        }
        // SAFETY: the mapping made in Region::open; nothing refers to it after drop.
        unsafe { libc::munmap(self.pm.mem.base().cast(), self.pm.mem.len() as usize) };
    }
}

fn format(pm: &Pm, len: u64) -> Result<(), RegionError> {
    let g = Geometry::for_size(len)?;
    for (off, value) in [
        (H_VERSION, VERSION),
        (H_SIZE, g.size),
        (H_CLEAN, 0),
        (H_ROOT, 0),
        (H_ROOT_SIZE, 0),
        (H_HEAP_START, g.heap_start),
        (H_HEAP_END, g.heap_end),
        (H_UNDO_START, g.undo_start),
        (H_UNDO_CAP, g.undo_cap),
        (H_REDO_COUNT, 0),
    ] {
        pm.mem.store(off, value)?;
    }
    pm.mem.store(g.undo_start + U_STATE, 0)?;
    pm.persist(g.undo_start, U_ENTRIES)?;
    Heap::format(pm, g.heap_start, g.heap_end)?;
    pm.persist(0, PAGE)?;
    // Last: only a fully formatted region carries the magic.
    pm.store_persist(H_MAGIC, MAGIC)
}

/// Maps the file shared; MAP_SYNC where the file system is DAX.
fn map(file: &File, len: u64) -> Result<(*mut u8, ScmMode), RegionError> {
    let fd = file.as_raw_fd();
    let prot = libc::PROT_READ | libc::PROT_WRITE;
    let len_usize =
        usize::try_from(len).map_err(|_| invalid("region larger than the address space"))?;
    // SAFETY: a fresh shared mapping of our own fd; the kernel picks the address.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len_usize,
            prot,
            libc::MAP_SHARED_VALIDATE | libc::MAP_SYNC,
            fd,
            0,
        )
    };
    if p != libc::MAP_FAILED {
        return Ok((p.cast(), ScmMode::SCM_MODE_DAX));
    }
    // SAFETY: as above, without MAP_SYNC (the file system is not DAX).
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len_usize,
            prot,
            libc::MAP_SHARED,
            fd,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(RegionError::Io {
            op: "mmap",
            source: std::io::Error::last_os_error(),
        });
    }
    let fs = rustix::fs::fstatfs(file).map_err(|e| RegionError::Io {
        op: "fstatfs",
        source: e.into(),
    })?;
    #[allow(clippy::unnecessary_cast)]
    let magic = fs.f_type as i64;
    let mode = if magic == TMPFS_MAGIC || magic == RAMFS_MAGIC {
        ScmMode::SCM_MODE_FENCE
    } else {
        ScmMode::SCM_MODE_MSYNC
    };
    Ok((p.cast(), forced_mode().unwrap_or(mode)))
}

/// `SCM_PERSIST_MODE=dax|msync|fence` makes a region use that way of persisting
/// although its file system would choose another, for measuring and comparing:
/// `dax` flushes cache lines on a non-DAX file (what PMDK's PMEM_IS_PMEM_FORCE
/// does); `fence` on a disk file gives up durability across a host crash (the page
/// cache is still written back eventually), which is what a benchmark of access
/// speed alone wants, never what a program that needs its data wants.
fn forced_mode() -> Option<ScmMode> {
    match std::env::var("SCM_PERSIST_MODE").ok()?.as_str() {
        "dax" => Some(ScmMode::SCM_MODE_DAX),
        "msync" => Some(ScmMode::SCM_MODE_MSYNC),
        "fence" => Some(ScmMode::SCM_MODE_FENCE),
        _ => None,
    }
}
