//! Making stores durable, in the one way the region's backing store needs, and
//! the crash-injection hook used by the consistency tests.
//!
//! The mode is chosen once at open:
//! - DAX with MAP_SYNC: the stores are in the persistence domain once their cache
//!   lines are written back, so flush each line and fence.
//! - tmpfs/ramfs: the page cache *is* the store; a fence orders the stores, and the
//!   data survives process and container restarts (not a host reboot).
//! - any other file: msync the dirty pages.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use crate::error::RegionError;

/// How a region's stores are made durable. The values are part of the ABI.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScmMode {
    /// Not a region (a bad handle was passed).
    SCM_MODE_NONE = 0,
    /// DAX mapping with MAP_SYNC: cache-line write-back and a fence.
    SCM_MODE_DAX = 1,
    /// tmpfs or ramfs: a fence; survives process and container restarts, not a reboot.
    SCM_MODE_FENCE = 2,
    /// A file on a block device: msync of the dirty range.
    SCM_MODE_MSYNC = 3,
}

impl ScmMode {
    pub fn name(self) -> &'static str {
        match self {
            ScmMode::SCM_MODE_NONE => "none",
            ScmMode::SCM_MODE_DAX => "dax",
            ScmMode::SCM_MODE_FENCE => "fence",
            ScmMode::SCM_MODE_MSYNC => "msync",
        }
    }
}

const CACHE_LINE: usize = 64;

/// Makes `len` bytes at `addr` of a mapping starting at `base` durable.
pub fn persist(mode: ScmMode, base: *mut u8, addr: *const u8, len: usize) -> Result<(), RegionError> {
    match mode {
        ScmMode::SCM_MODE_DAX => flush_lines(addr, len),
        ScmMode::SCM_MODE_FENCE | ScmMode::SCM_MODE_NONE => store_fence(),
        ScmMode::SCM_MODE_MSYNC => msync_range(base, addr, len)?,
    }
    persist_point();
    Ok(())
}

fn store_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: sfence has no memory operands and is part of SSE, present on every x86_64.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
    #[cfg(not(target_arch = "x86_64"))]
    std::sync::atomic::fence(Ordering::SeqCst);
}

fn flush_lines(addr: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let start = (addr as usize) & !(CACHE_LINE - 1);
        let end = addr as usize + len;
        let mut line = start;
        while line < end {
            // SAFETY: `line` lies within a cache line overlapping [addr, addr+len), a range
            // of the live mapping (callers pass region ranges); clflush only writes back.
            unsafe { std::arch::x86_64::_mm_clflush(line as *const u8) };
            line += CACHE_LINE;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (addr, len);
    store_fence();
}

fn msync_range(base: *mut u8, addr: *const u8, len: usize) -> Result<(), RegionError> {
    let page = 4096usize;
    let start = ((addr as usize - base as usize) & !(page - 1)) + base as usize;
    let end = addr as usize + len;
    // SAFETY: [start, end) is inside the region's mapping: start is page-aligned down
    // from an address inside it, but never below base (base is page-aligned).
    let rc = unsafe { libc::msync(start as *mut libc::c_void, end - start, libc::MS_SYNC) };
    if rc != 0 {
        return Err(RegionError::Io { op: "msync", source: std::io::Error::last_os_error() });
    }
    Ok(())
}

/// The exit code of a process the crash hook (SCM_CRASH_AT) ended.
pub const SCM_CRASH_EXIT: i32 = 77;

static PERSIST_POINTS: AtomicU64 = AtomicU64::new(0);
static CRASH_AT: OnceLock<u64> = OnceLock::new();

/// Counts one persist point. With `SCM_CRASH_AT=N` in the environment the process
/// dies (exit 77, no cleanup) right after the Nth one, as if it crashed there.
pub fn persist_point() {
    let target = *CRASH_AT.get_or_init(|| {
        std::env::var("SCM_CRASH_AT").ok().and_then(|v| v.parse().ok()).unwrap_or(0)
    });
    let n = PERSIST_POINTS.fetch_add(1, Ordering::Relaxed) + 1;
    if target != 0 && n == target {
        // SAFETY: _exit ends the process at once, running no destructors: a crash.
        unsafe { libc::_exit(SCM_CRASH_EXIT) };
    }
}

/// Persist points passed so far in this process (for sweeping the crash hook).
pub fn persist_points() -> u64 {
    PERSIST_POINTS.load(Ordering::Relaxed)
}
