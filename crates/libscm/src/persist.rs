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

/// Starts writing `len` bytes at `addr` back (DAX: cache-line write-back; msync
/// mode: msync, which is synchronous). Durable only after [`drain`].
pub fn flush(mode: ScmMode, base: *mut u8, addr: *const u8, len: usize) -> Result<(), RegionError> {
    match mode {
        ScmMode::SCM_MODE_DAX => flush_lines(addr, len),
        ScmMode::SCM_MODE_FENCE | ScmMode::SCM_MODE_NONE => {}
        ScmMode::SCM_MODE_MSYNC => msync_range(base, addr, len)?,
    }
    Ok(())
}

/// Waits for every flush before it (a store fence), and counts one persist point.
pub fn drain(mode: ScmMode) {
    if mode != ScmMode::SCM_MODE_MSYNC {
        store_fence();
    }
    persist_point();
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

#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, PartialEq, Eq)]
enum LineFlush {
    Clwb,
    Clflushopt,
    Clflush,
}

/// The best cache-line write-back instruction this CPU has (CPUID leaf 7, EBX bits
/// 24 and 23): CLWB keeps the line cached, CLFLUSHOPT does not serialise, CLFLUSH
/// is always there.
#[cfg(target_arch = "x86_64")]
fn line_flush() -> LineFlush {
    static KIND: OnceLock<LineFlush> = OnceLock::new();
    *KIND.get_or_init(|| {
        // cpuid is on every x86_64 CPU; leaf 0 gives the highest leaf.
        let max = std::arch::x86_64::__cpuid(0).eax;
        if max < 7 {
            return LineFlush::Clflush;
        }
        let ebx = std::arch::x86_64::__cpuid_count(7, 0).ebx;
        if ebx & (1 << 24) != 0 {
            LineFlush::Clwb
        } else if ebx & (1 << 23) != 0 {
            LineFlush::Clflushopt
        } else {
            LineFlush::Clflush
        }
    })
}

fn flush_lines(addr: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let kind = line_flush();
        let start = (addr as usize) & !(CACHE_LINE - 1);
        let end = addr as usize + len;
        let mut line = start;
        while line < end {
            let p = line as *const u8;
            // SAFETY: `p` lies within a cache line overlapping [addr, addr+len), a range of
            // the live mapping (callers pass region ranges); these instructions only write
            // the line back, and the CPU has them (line_flush checked CPUID).
            unsafe {
                match kind {
                    LineFlush::Clwb => {
                        std::arch::asm!("clwb [{0}]", in(reg) p, options(nostack, preserves_flags))
                    }
                    LineFlush::Clflushopt => {
                        std::arch::asm!("clflushopt [{0}]", in(reg) p, options(nostack, preserves_flags))
                    }
                    LineFlush::Clflush => std::arch::x86_64::_mm_clflush(p),
                }
            };
            line += CACHE_LINE;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (addr, len);
}

fn msync_range(base: *mut u8, addr: *const u8, len: usize) -> Result<(), RegionError> {
    let page = 4096usize;
    let start = ((addr as usize - base as usize) & !(page - 1)) + base as usize;
    let end = addr as usize + len;
    // SAFETY: [start, end) is inside the region's mapping: start is page-aligned down
    // from an address inside it, but never below base (base is page-aligned).
    let rc = unsafe { libc::msync(start as *mut libc::c_void, end - start, libc::MS_SYNC) };
    if rc != 0 {
        return Err(RegionError::Io {
            op: "msync",
            source: std::io::Error::last_os_error(),
        });
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
        std::env::var("SCM_CRASH_AT")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
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
