//! Mapping another process's pages from outside, so that its next touch of
//! them takes no fault at all.
//!
//! MADV_WILLNEED reads swapped pages into the swap cache but leaves them out
//! of the process's page tables: its next touch of each is a minor fault
//! (1.4-1.7 µs a page, `memext-e2e kbench`; 13k of them in a bench/faas call
//! whose handler took 24 ms, its function read back ahead of it). process_madvise(2) takes no
//! advice that maps (MADV_POPULATE_READ is for a process's own memory), but
//! process_vm_readv(2) faults every page it reads into the *target's* page
//! tables, as the target's own read would: a page in the swap cache is
//! mapped, a swapped one read in and mapped. [`populate`] reads one byte of
//! every page and throws it away.
//!
//! Measured by `memext-e2e kbench` and checked by the root round trip (a
//! touch after it takes no fault). The daemon maps so the read-back pages of
//! the blocks a predicted call's map-back could not make huge pages. Each
//! fault a read takes is counted by the kernel to the target's memory cgroup
//! as the target's own (`pgfault`): [`PopulateOutcome::faults`] says how
//! many, so that they are not taken for the target's activity (bench/faas,
//! session 68: read as its wake 2 s before its call, 50-70 times a run).
//! It also reads what nothing else reads back: the written pages of private
//! file mappings in swap (session 71), on which MADV_WILLNEED reads the file
//! ahead instead.

use crate::madvise::IOV_MAX;
use crate::peer::pidfd_alive;
use crate::pidfd::ProcessHandle;
use crate::{page_size, AddrRange, Pid};

#[derive(Debug, thiserror::Error)]
pub enum PopulateError {
    #[error("process {pid} exited while its pages were mapped")]
    Vanished { pid: Pid },
    #[error("process_vm_readv on process {pid} is not permitted (needs ptrace access)")]
    NotPermitted { pid: Pid },
    #[error("process_vm_readv on process {pid} failed")]
    Syscall {
        pid: Pid,
        #[source]
        source: std::io::Error,
    },
}

/// What one [`populate`] call achieved.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PopulateOutcome {
    /// Pages now mapped in the process (they were, or were made so).
    pub pages: u64,
    /// Pages the process does not map readably (unmapped in the meantime, a
    /// guard page, PROT_NONE): skipped, not an error.
    pub skipped: u64,
    /// Number of system calls made.
    pub calls: usize,
    /// Page faults the reads took in the target's page tables, (all, major),
    /// as its memory cgroup counts them: every one in `pgfault`, those that
    /// read a page from swap in `pgmajfault` too. The kernel counts them to
    /// that cgroup as the target's own, and to the thread that read (not to
    /// the target's processes): a caller that judges the target's activity
    /// by its cgroup's faults leaves these out. Measured as this thread's
    /// fault counters across the reads (getrusage(RUSAGE_THREAD): minor and
    /// major apart, so all is their sum). A kernel that counts `pgfault` at
    /// each try of a fault counts a major one up to twice there (the
    /// cgroup-v2 VM's: 147,378 against 131,071 said, 16,389 of them major):
    /// up to that many are then left in what the caller sees.
    pub faults: (u64, u64),
}

/// Maps every page of `ranges` into the page tables of the process behind
/// `target` by reading one byte of each (the bytes are discarded), up to
/// [`IOV_MAX`] pages a call. A page it can no longer read is skipped.
///
/// The call names the process by pid (process_vm_readv takes no pidfd); the
/// pidfd is checked before and after, so a process that exits meanwhile is
/// reported as [`PopulateError::Vanished`]. Its pid cannot have been reused
/// while the pidfd still showed it alive.
pub fn populate(
    target: &ProcessHandle,
    ranges: &[AddrRange],
) -> Result<PopulateOutcome, PopulateError> {
    let pid = target.pid();
    if !pidfd_alive(target) {
        return Err(PopulateError::Vanished { pid });
    }
    let mut out = PopulateOutcome::default();
    // Written now, so that their own first touches are not counted below.
    let mut scratch = vec![1u8; IOV_MAX];
    let mut batch: Vec<u64> = vec![0; IOV_MAX];
    batch.clear();
    let before = thread_faults();
    for page in pages_of(ranges) {
        batch.push(page);
        if batch.len() == IOV_MAX {
            read_batch(pid, &batch, &mut scratch, &mut out)?;
            batch.clear();
        }
    }
    if !batch.is_empty() {
        read_batch(pid, &batch, &mut scratch, &mut out)?;
    }
    let after = thread_faults();
    let major = after.1.saturating_sub(before.1);
    out.faults = (after.0.saturating_sub(before.0) + major, major);
    if !pidfd_alive(target) {
        return Err(PopulateError::Vanished { pid });
    }
    Ok(out)
}

/// The page faults this thread has taken, (minor, major): faults it took in
/// another process's memory through process_vm_readv count here too (the
/// kernel's `mm_account_fault` for a fault on another's behalf). (0, 0) if
/// the kernel will not say.
fn thread_faults() -> (u64, u64) {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `usage` is a live, writable rusage for the kernel to fill;
    // RUSAGE_THREAD asks for the calling thread only.
    let ret = unsafe { libc::getrusage(libc::RUSAGE_THREAD, usage.as_mut_ptr()) };
    if ret != 0 {
        return (0, 0);
    }
    // SAFETY: getrusage succeeded, so it filled `usage` (and it was zeroed).
    let u = unsafe { usage.assume_init() };
    let count = |v: libc::c_long| u64::try_from(v).unwrap_or(0);
    (count(u.ru_minflt), count(u.ru_majflt))
}

/// The first address of every page `ranges` touch, in order.
fn pages_of(ranges: &[AddrRange]) -> impl Iterator<Item = u64> + '_ {
    let page = page_size();
    ranges.iter().flat_map(move |r| {
        let first = r.start - r.start % page;
        (first..r.end).step_by(usize::try_from(page).unwrap_or(4096))
    })
}

/// Reads one byte of each page of `batch`; a page that cannot be read is
/// skipped and the rest of the batch read after it.
fn read_batch(
    pid: Pid,
    batch: &[u64],
    scratch: &mut [u8],
    out: &mut PopulateOutcome,
) -> Result<(), PopulateError> {
    let mut rest = batch;
    while !rest.is_empty() {
        out.calls += 1;
        match read_pages(pid, rest, scratch) {
            Ok(n) => {
                out.pages += n as u64;
                // The kernel stops at the first page it cannot read.
                let stop = n.min(rest.len());
                if stop < rest.len() {
                    out.skipped += 1;
                    rest = &rest[stop + 1..];
                } else {
                    rest = &[];
                }
            }
            Err(e) => match e.raw_os_error() {
                Some(libc::ESRCH) => return Err(PopulateError::Vanished { pid }),
                Some(libc::EPERM) => return Err(PopulateError::NotPermitted { pid }),
                // Its first page cannot be read (EFAULT), or could not be
                // faulted in now (ENOMEM): skip it, go on with the rest.
                Some(libc::EFAULT | libc::ENOMEM) => {
                    out.skipped += 1;
                    rest = &rest[1..];
                }
                _ => return Err(PopulateError::Syscall { pid, source: e }),
            },
        }
    }
    Ok(())
}

/// One process_vm_readv of one byte of each page of `pages` (≤ IOV_MAX)
/// into `scratch`; retried on EINTR. Returns the pages read.
fn read_pages(pid: Pid, pages: &[u64], scratch: &mut [u8]) -> Result<usize, std::io::Error> {
    let n = pages.len().min(scratch.len());
    let local = libc::iovec {
        iov_base: scratch.as_mut_ptr().cast(),
        iov_len: n,
    };
    let remote: Vec<libc::iovec> = pages[..n]
        .iter()
        .map(|&a| libc::iovec {
            // An address in the target's address space: never dereferenced
            // here, only handed to the kernel.
            #[allow(clippy::cast_possible_truncation)] // 64-bit only (lib.rs)
            iov_base: a as usize as *mut libc::c_void,
            iov_len: 1,
        })
        .collect();
    let raw_pid =
        libc::pid_t::try_from(pid).map_err(|_| std::io::Error::from_raw_os_error(libc::ESRCH))?;
    // SAFETY: `local` points into `scratch`, live and writable for `n` bytes
    // for the whole call; `remote` is a live array of `n` (≤ IOV_MAX) iovecs
    // that the kernel only reads, and whose addresses are resolved in the
    // target process, never in ours. Flags must be 0.
    let read = crate::retry_on_eintr(|| unsafe {
        libc::process_vm_readv(raw_pid, &local, 1, remote.as_ptr(), n as libc::c_ulong, 0) as i64
    })?;
    Ok(usize::try_from(read).unwrap_or(n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pagemap::mincore_own;

    /// `pages` fresh anonymous pages of this process, never touched.
    fn untouched(pages: usize) -> *mut u8 {
        // SAFETY: a new private anonymous mapping; nothing else refers to it,
        // and the tests only hand its addresses to the kernel.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                pages * crate::page_bytes(),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED, "mmap");
        p.cast()
    }

    fn unmap(addr: *mut u8, pages: usize) {
        // SAFETY: `addr` is page-aligned and its pages are ours (from `untouched`).
        let ret = unsafe { libc::munmap(addr.cast(), pages * crate::page_bytes()) };
        assert_eq!(ret, 0, "munmap");
    }

    fn range(addr: *mut u8, pages: usize) -> AddrRange {
        let start = addr as u64;
        AddrRange::new(start, start + (pages * crate::page_bytes()) as u64)
    }

    #[test]
    fn every_page_of_the_ranges_is_mapped_without_being_touched() {
        let (n, page) = (64, crate::page_bytes());
        let a = untouched(n);
        assert_eq!(
            mincore_own(a, n * page).expect("mincore"),
            0,
            "nothing mapped yet"
        );
        let me = ProcessHandle::open(std::process::id()).expect("own pidfd");
        // Two ranges, the second starting inside a page.
        let split = range(a, 10);
        let rest = AddrRange::new(split.end + 100, range(a, n).end);
        let out = populate(&me, &[split, rest]).expect("populate");
        assert_eq!(mincore_own(a, n * page).expect("mincore"), n);
        assert_eq!((out.pages, out.skipped, out.calls), (n as u64, 0, 1));
        unmap(a, n);
    }

    #[test]
    fn the_faults_the_reads_took_are_counted_and_none_where_pages_were_mapped() {
        let n = 48;
        let a = untouched(n);
        let me = ProcessHandle::open(std::process::id()).expect("own pidfd");
        let first = populate(&me, &[range(a, n)]).expect("populate");
        // Each untouched page is a fault (the zero page mapped), none major.
        assert_eq!(first.faults, (n as u64, 0));
        let again = populate(&me, &[range(a, n)]).expect("populate");
        assert_eq!(again.faults, (0, 0), "mapped already: no fault");
        unmap(a, n);
    }

    #[test]
    fn a_page_no_longer_mapped_is_skipped_and_the_rest_mapped() {
        let (n, page) = (2 * IOV_MAX + 10, crate::page_bytes());
        let a = untouched(n);
        // SAFETY: page 5 and page IOV_MAX + 3 lie inside the mapping.
        let (hole1, hole2) = unsafe { (a.add(5 * page), a.add((IOV_MAX + 3) * page)) };
        unmap(hole1, 1);
        unmap(hole2, 1);
        let me = ProcessHandle::open(std::process::id()).expect("own pidfd");
        let out = populate(&me, &[range(a, n)]).expect("populate");
        assert_eq!((out.pages, out.skipped), (n as u64 - 2, 2));
        assert_eq!(mincore_own(a, 5 * page).expect("mincore"), 5);
        // SAFETY: the last pages of the mapping, after the second hole.
        let tail = unsafe { hole2.add(page) };
        let left = n - IOV_MAX - 4;
        assert_eq!(mincore_own(tail, left * page).expect("mincore"), left);
        unmap(a, 5);
        // SAFETY: the pages between the holes and after the second one.
        unsafe {
            unmap(hole1.add(page), IOV_MAX - 3);
            unmap(tail, left);
        }
    }

    #[test]
    fn a_process_that_has_exited_is_vanished() {
        let mut child = std::process::Command::new("true")
            .spawn()
            .expect("spawn true");
        let h = ProcessHandle::open(child.id()).expect("pidfd of the child");
        child.wait().expect("wait");
        let page = crate::page_size();
        let r = AddrRange::new(page * 16, page * 17);
        assert!(matches!(
            populate(&h, &[r]),
            Err(PopulateError::Vanished { .. })
        ));
    }
}
