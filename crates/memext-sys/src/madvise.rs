//! process_madvise(2) over many ranges of another process at once: the
//! mechanism behind pushing a context out (MADV_PAGEOUT, MADV_COLD) and
//! bringing its working set back (MADV_WILLNEED, then MADV_COLLAPSE to map it).

use std::os::fd::{AsFd, AsRawFd};

use crate::pidfd::ProcessHandle;
use crate::{AddrRange, Pid};

/// The kernel accepts at most this many iovecs per call (UIO_MAXIOV).
pub const IOV_MAX: usize = 1024;

/// What to tell the kernel about a set of ranges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Advice {
    /// Reclaim now: anonymous pages go to swap, clean file pages are dropped.
    PageOut,
    /// Deactivate: make the pages the first candidates of the next reclaim.
    Cold,
    /// Read back: swapped anonymous pages are read into the swap cache.
    WillNeed,
    /// Map back: every whole 2 MiB-aligned block of the ranges is made one
    /// huge page, its swapped pages read in synchronously and everything mapped,
    /// so the process's next touches take no fault at all (Linux 6.1+).
    Collapse,
}

impl Advice {
    fn raw(self) -> i32 {
        match self {
            Advice::PageOut => libc::MADV_PAGEOUT,
            Advice::Cold => libc::MADV_COLD,
            Advice::WillNeed => libc::MADV_WILLNEED,
            Advice::Collapse => libc::MADV_COLLAPSE,
        }
    }
}

impl std::fmt::Display for Advice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Advice::PageOut => "MADV_PAGEOUT",
            Advice::Cold => "MADV_COLD",
            Advice::WillNeed => "MADV_WILLNEED",
            Advice::Collapse => "MADV_COLLAPSE",
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum MadviseError {
    #[error("process {pid} exited during {advice}")]
    Vanished { pid: Pid, advice: Advice },
    #[error("process_madvise({advice}) on process {pid} is not permitted (needs CAP_SYS_NICE and ptrace access)")]
    NotPermitted { pid: Pid, advice: Advice },
    #[error("process_madvise({advice}) on process {pid} failed")]
    Syscall {
        pid: Pid,
        advice: Advice,
        #[source]
        source: std::io::Error,
    },
}

/// What one [`advise`] call achieved.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct AdviseOutcome {
    /// Bytes the kernel accepted advice for.
    pub bytes: u64,
    /// Ranges skipped because the process no longer maps them (ENOMEM) or
    /// they cannot take this advice (EINVAL, e.g. locked or special mappings),
    /// or (MADV_COLLAPSE) the kernel refused them for now (EAGAIN, EBUSY).
    pub skipped: Vec<AddrRange>,
    /// Why, range by range.
    pub refused: Refusals,
    /// Number of system calls made.
    pub calls: usize,
}

/// The skipped ranges of an [`advise`] by the kernel's error for each (for
/// MADV_COLLAPSE, mm/khugepaged.c `madvise_collapse_errno`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Refusals {
    /// EAGAIN: a page busy for now (locked, off the LRU, an extra reference).
    pub busy: usize,
    /// EBUSY: (MADV_COLLAPSE) the huge page could not be charged to the
    /// process's cgroup.
    pub charge: usize,
    /// ENOMEM: the range is no longer mapped, or (MADV_COLLAPSE) no huge page
    /// could be allocated.
    pub no_memory: usize,
    /// EINVAL or EFAULT (a range that cannot take this advice, e.g. a block
    /// the mapping only partly covers), or nothing accepted and no error.
    pub unsuitable: usize,
}

impl Refusals {
    /// Counts a range skipped for `errno` (None: nothing accepted, no
    /// error). False, and nothing counted, for an error that is no skip.
    pub fn count(&mut self, errno: Option<i32>) -> bool {
        let slot = match errno {
            Some(libc::EAGAIN) => &mut self.busy,
            Some(libc::EBUSY) => &mut self.charge,
            Some(libc::ENOMEM) => &mut self.no_memory,
            Some(libc::EINVAL | libc::EFAULT) | None => &mut self.unsuitable,
            Some(_) => return false,
        };
        *slot += 1;
        true
    }

    /// Ranges skipped, for whatever reason.
    pub fn total(&self) -> usize {
        self.busy + self.charge + self.no_memory + self.unsuitable
    }

    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: Refusals) {
        self.busy += other.busy;
        self.charge += other.charge;
        self.no_memory += other.no_memory;
        self.unsuitable += other.unsuitable;
    }
}

/// Gives `advice` for every range in `ranges` of the process behind `target`,
/// in batches of up to [`IOV_MAX`] ranges a call. A range the process has
/// unmapped in the meantime is skipped, not an error.
pub fn advise(
    target: &ProcessHandle,
    ranges: &[AddrRange],
    advice: Advice,
) -> Result<AdviseOutcome, MadviseError> {
    let mut out = AdviseOutcome::default();
    let mut rest = ranges;
    while !rest.is_empty() {
        let batch = &rest[..rest.len().min(IOV_MAX)];
        match advise_batch(target, batch, advice) {
            Ok(done_bytes) => {
                out.calls += 1;
                out.bytes += done_bytes;
                // The kernel stops at the first range it fails on and reports the
                // bytes of the whole ranges before it; find where it stopped.
                let done = whole_ranges_covering(batch, done_bytes);
                if done == batch.len() {
                    rest = &rest[batch.len()..];
                } else if done == 0 {
                    // Nothing accepted and no error (an empty range): go past it.
                    out.refused.count(None);
                    out.skipped.push(rest[0]);
                    rest = &rest[1..];
                } else {
                    // Retry the failing range alone to learn why; then go past it.
                    rest = &rest[done..];
                }
            }
            Err(e) => {
                out.calls += 1;
                match e.raw_os_error() {
                    Some(libc::ESRCH) => {
                        return Err(MadviseError::Vanished {
                            pid: target.pid(),
                            advice,
                        })
                    }
                    Some(libc::EPERM) => {
                        return Err(MadviseError::NotPermitted {
                            pid: target.pid(),
                            advice,
                        })
                    }
                    // The first range of the batch is unmapped or unsuitable, or
                    // (MADV_COLLAPSE) one of its blocks could not be made a huge
                    // page now: busy (EAGAIN), no huge page (ENOMEM), or the
                    // cgroup's limit (EBUSY). The kernel went on with its other blocks.
                    errno if out.refused.count(errno) => {
                        out.skipped.push(rest[0]);
                        rest = &rest[1..];
                    }
                    _ => {
                        return Err(MadviseError::Syscall {
                            pid: target.pid(),
                            advice,
                            source: e,
                        })
                    }
                }
            }
        }
    }
    Ok(out)
}

/// How many leading ranges of `batch` add up to exactly `bytes`.
fn whole_ranges_covering(batch: &[AddrRange], bytes: u64) -> usize {
    let mut sum = 0u64;
    for (i, r) in batch.iter().enumerate() {
        if sum >= bytes {
            return i;
        }
        sum += r.len();
    }
    batch.len()
}

/// One process_madvise call; retried on EINTR.
fn advise_batch(
    target: &ProcessHandle,
    batch: &[AddrRange],
    advice: Advice,
) -> Result<u64, std::io::Error> {
    let iov: Vec<libc::iovec> = batch
        .iter()
        .map(|r| libc::iovec {
            // The address is in the target's address space; it is never
            // dereferenced here, only handed to the kernel.
            #[allow(clippy::cast_possible_truncation)] // 64-bit only (lib.rs)
            iov_base: r.start as usize as *mut libc::c_void,
            iov_len: usize::try_from(r.len()).unwrap_or(usize::MAX),
        })
        .collect();
    // SAFETY: `iov` is a live, properly initialised array of `iov.len()` iovecs
    // (≤ IOV_MAX) that outlives the call; the kernel only reads it. The pidfd is
    // owned by `target` and open for the duration of the call. Flags must be 0.
    crate::retry_on_eintr(|| unsafe {
        libc::syscall(
            libc::SYS_process_madvise,
            target.as_fd().as_raw_fd(),
            iov.as_ptr(),
            iov.len(),
            advice.raw(),
            0u32,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(start: u64, end: u64) -> AddrRange {
        AddrRange::new(start, end)
    }

    #[test]
    fn covering_counts_whole_ranges() {
        let b = [r(0, 4096), r(8192, 16384), r(20480, 24576)];
        assert_eq!(whole_ranges_covering(&b, 0), 0);
        assert_eq!(whole_ranges_covering(&b, 4096), 1);
        assert_eq!(whole_ranges_covering(&b, 4096 + 8192), 2);
        assert_eq!(whole_ranges_covering(&b, 4096 + 8192 + 4096), 3);
    }

    #[test]
    fn refusals_are_counted_by_the_kernels_reason() {
        let mut r = Refusals::default();
        for errno in [
            libc::EAGAIN,
            libc::EBUSY,
            libc::EBUSY,
            libc::ENOMEM,
            libc::EINVAL,
        ] {
            assert!(r.count(Some(errno)), "{errno}");
        }
        assert!(r.count(None), "nothing accepted, no error");
        assert!(!r.count(Some(libc::EPERM)), "not a skip: an error");
        let want = Refusals {
            busy: 1,
            charge: 2,
            no_memory: 1,
            unsuitable: 2,
        };
        assert_eq!(r, want);
        r.add(want);
        assert_eq!(r.charge, 4);
        assert_eq!(r.total(), 12);
    }

    /// AnonHugePages (KiB) of the mapping of this process that contains `addr`.
    fn anon_huge_kib_at(addr: u64) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("smaps");
        let mut inside = false;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ') {
                if let Some((a, b)) = range.split_once('-') {
                    if let (Ok(a), Ok(b)) = (u64::from_str_radix(a, 16), u64::from_str_radix(b, 16))
                    {
                        inside = (a..b).contains(&addr);
                        continue;
                    }
                }
            }
            if inside {
                if let Some(v) = line.strip_prefix("AnonHugePages:") {
                    return v.trim().trim_end_matches("kB").trim().parse().expect("kB");
                }
            }
        }
        0
    }

    #[test]
    fn collapse_maps_a_whole_block_as_one_huge_page() {
        let block = 2u64 << 20;
        // Not a huge page yet: the heap is only eligible on madvise, and nobody asked.
        let buf = vec![3u8; usize::try_from(4 * block).expect("small")];
        let start = (buf.as_ptr() as u64).div_ceil(block) * block;
        let before = anon_huge_kib_at(start);
        let me = ProcessHandle::open(std::process::id()).expect("own pidfd");
        // A range holding no whole block is accepted and changes nothing.
        let out = advise(&me, &[r(start, start + block / 2)], Advice::Collapse).expect("collapse");
        assert_eq!(anon_huge_kib_at(start), before);
        assert!(out.skipped.is_empty(), "{:?}", out.skipped);
        let out = advise(&me, &[r(start, start + block)], Advice::Collapse).expect("collapse");
        assert_eq!(out.bytes + out.skipped.len() as u64 * block, block);
        assert!(
            anon_huge_kib_at(start) >= before + 2048,
            "the block is one huge page now ({} KiB before, {} after)",
            before,
            anon_huge_kib_at(start)
        );
        assert!(buf.iter().all(|&b| b == 3), "contents kept");
    }

    #[test]
    fn many_ranges_go_in_batches_of_iov_max() {
        let page = crate::page_size();
        let n = 2 * IOV_MAX + 952;
        let buf = vec![1u8; (n + 1) * 2 * crate::page_bytes()];
        let base = (buf.as_ptr() as u64).div_ceil(page) * page;
        // Every other page, so that no two ranges could be merged.
        let ranges: Vec<AddrRange> = (0..n as u64)
            .map(|i| r(base + 2 * i * page, base + (2 * i + 1) * page))
            .collect();
        let me = ProcessHandle::open(std::process::id()).expect("own pidfd");
        let out = advise(&me, &ranges, Advice::Cold).expect("advise");
        assert_eq!(out.calls, 3);
        assert_eq!(out.bytes, n as u64 * page);
        assert!(out.skipped.is_empty(), "{:?}", out.skipped);
        drop(buf);
    }

    #[test]
    fn cold_on_own_heap_and_unmapped_range_is_skipped() {
        let page = crate::page_size();
        let len = usize::try_from(64 * page).expect("small");
        let buf = vec![1u8; len];
        let start = (buf.as_ptr() as u64).div_ceil(page) * page;
        let me = ProcessHandle::open(std::process::id()).expect("own pidfd");
        // Page 0 is never mapped in a Linux process: the kernel must refuse it,
        // and advise() must go on to the next range.
        let ranges = [r(0, page), r(start, start + 16 * page)];
        let out = advise(&me, &ranges, Advice::Cold).expect("advise own memory");
        assert_eq!(out.skipped, vec![r(0, page)]);
        assert_eq!(out.bytes, 16 * page);
        drop(buf);
    }
}
