//! /proc/PID/pagemap: which pages of another process are resident and which are
//! in swap, as coalesced ranges. Uses the PAGEMAP_SCAN ioctl (Linux 6.7+), which
//! returns ranges directly, and falls back to reading the 8-byte-per-page table.
//! This is also memext's mincore(2) for other processes.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;

use crate::maps::{vanished, Mapping};
use crate::{page_size, AddrRange, Pid};

#[derive(Debug, thiserror::Error)]
pub enum PagemapError {
    #[error("process {pid} no longer exists")]
    Vanished { pid: Pid },
    #[error("cannot open /proc/{pid}/pagemap")]
    Open {
        pid: Pid,
        #[source]
        source: std::io::Error,
    },
    #[error("reading /proc/{pid}/pagemap at {addr:#x} failed")]
    Read {
        pid: Pid,
        addr: u64,
        #[source]
        source: std::io::Error,
    },
}

/// Where a page of a process is now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum PageState {
    Resident,
    Swapped,
}

/// A run of adjacent pages in the same state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct PageRange {
    pub range: AddrRange,
    pub state: PageState,
}

/// How a [`Pagemap`] reads page states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanBackend {
    /// The PAGEMAP_SCAN ioctl; kernels without it make the first call fall back.
    Ioctl,
    /// pread of one 64-bit entry per page.
    Pread,
}

const PM_PRESENT: u64 = 1 << 63;
const PM_SWAPPED: u64 = 1 << 62;

/// The state one pagemap entry describes, if the page is in memory or swap.
pub fn entry_state(entry: u64) -> Option<PageState> {
    if entry & PM_PRESENT != 0 {
        Some(PageState::Resident)
    } else if entry & PM_SWAPPED != 0 {
        Some(PageState::Swapped)
    } else {
        None
    }
}

/// Appends the pages at `start`, `start + page`, … described by `entries` to
/// `out`, merging with the last range of `out` where contiguous and equal.
pub fn coalesce_entries(start: u64, page: u64, entries: &[u64], out: &mut Vec<PageRange>) {
    for (i, &e) in entries.iter().enumerate() {
        if let Some(state) = entry_state(e) {
            let addr = start + i as u64 * page;
            push_range(out, AddrRange::new(addr, addr + page), state);
        }
    }
}

fn push_range(out: &mut Vec<PageRange>, range: AddrRange, state: PageState) {
    match out.last_mut() {
        Some(last) if last.state == state && last.range.end == range.start => {
            last.range.end = range.end;
        }
        _ => out.push(PageRange { range, state }),
    }
}

/// Page counts of a set of ranges.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Residency {
    pub resident_pages: u64,
    pub swapped_pages: u64,
}

impl Residency {
    pub fn of(ranges: &[PageRange]) -> Self {
        let page = page_size();
        ranges.iter().fold(Self::default(), |mut acc, r| {
            match r.state {
                PageState::Resident => acc.resident_pages += r.range.len() / page,
                PageState::Swapped => acc.swapped_pages += r.range.len() / page,
            }
            acc
        })
    }
}

/// An open /proc/PID/pagemap.
#[derive(Debug)]
pub struct Pagemap {
    pid: Pid,
    file: File,
    backend: ScanBackend,
    page: u64,
}

impl Pagemap {
    /// Opens the pagemap of `pid`, preferring the PAGEMAP_SCAN ioctl.
    pub fn open(pid: Pid) -> Result<Self, PagemapError> {
        Self::open_with(pid, ScanBackend::Ioctl)
    }

    pub fn open_with(pid: Pid, backend: ScanBackend) -> Result<Self, PagemapError> {
        Self::open_in(std::path::Path::new("/proc"), pid, backend)
    }

    /// Opens PROC_ROOT/PID/pagemap (a proc file system mounted elsewhere).
    pub fn open_in(
        proc_root: &std::path::Path,
        pid: Pid,
        backend: ScanBackend,
    ) -> Result<Self, PagemapError> {
        let file = File::open(proc_root.join(pid.to_string()).join("pagemap")).map_err(|e| {
            if vanished(&e) {
                PagemapError::Vanished { pid }
            } else {
                PagemapError::Open { pid, source: e }
            }
        })?;
        Ok(Self {
            pid,
            file,
            backend,
            page: page_size(),
        })
    }

    /// The backend in use (after a fallback, `Pread`).
    pub fn backend(&self) -> ScanBackend {
        self.backend
    }

    /// Resident and swapped ranges within each of `mappings`, in address order.
    pub fn scan_mappings(&mut self, mappings: &[Mapping]) -> Result<Vec<PageRange>, PagemapError> {
        let mut out = Vec::new();
        for m in mappings {
            self.scan_into(m.range, &mut out)?;
        }
        Ok(out)
    }

    /// Resident and swapped ranges within `range`.
    pub fn scan(&mut self, range: AddrRange) -> Result<Vec<PageRange>, PagemapError> {
        let mut out = Vec::new();
        self.scan_into(range, &mut out)?;
        Ok(out)
    }

    fn scan_into(
        &mut self,
        range: AddrRange,
        out: &mut Vec<PageRange>,
    ) -> Result<(), PagemapError> {
        if range.is_empty() {
            return Ok(());
        }
        if self.backend == ScanBackend::Ioctl {
            match self.scan_ioctl(range, out) {
                Ok(()) => return Ok(()),
                Err(ScanIoctlError::Unsupported) => self.backend = ScanBackend::Pread,
                Err(ScanIoctlError::Other(e)) => return Err(e),
            }
        }
        self.scan_pread(range, out)
    }

    fn scan_pread(&self, range: AddrRange, out: &mut Vec<PageRange>) -> Result<(), PagemapError> {
        const CHUNK: usize = 8192; // entries: 64 KiB per read
        let mut buf = vec![0u8; CHUNK * 8];
        let mut entries = Vec::with_capacity(CHUNK);
        let mut addr = range.start;
        while addr < range.end {
            #[allow(clippy::cast_possible_truncation)] // at most CHUNK
            let pages = ((range.end - addr) / self.page).min(CHUNK as u64) as usize;
            let want = &mut buf[..pages * 8];
            let mut got = 0;
            while got < want.len() {
                let off = (addr / self.page) * 8 + got as u64;
                match self.file.read_at(&mut want[got..], off) {
                    Ok(0) => return Err(PagemapError::Vanished { pid: self.pid }),
                    Ok(n) => got += n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) if vanished(&e) => return Err(PagemapError::Vanished { pid: self.pid }),
                    Err(e) => {
                        return Err(PagemapError::Read {
                            pid: self.pid,
                            addr,
                            source: e,
                        })
                    }
                }
            }
            entries.clear();
            entries.extend(
                want.chunks_exact(8).map(|c| {
                    u64::from_ne_bytes(c.try_into().expect("chunks_exact(8) gives 8 bytes"))
                }),
            );
            coalesce_entries(addr, self.page, &entries, out);
            addr += pages as u64 * self.page;
        }
        Ok(())
    }

    fn scan_ioctl(&self, range: AddrRange, out: &mut Vec<PageRange>) -> Result<(), ScanIoctlError> {
        let mut regions = vec![PageRegion::default(); 512];
        let mut start = range.start;
        while start < range.end {
            let mut arg = PmScanArg {
                size: std::mem::size_of::<PmScanArg>() as u64,
                flags: 0,
                start,
                end: range.end,
                walk_end: 0,
                vec: regions.as_mut_ptr() as u64,
                vec_len: regions.len() as u64,
                max_pages: 0,
                category_inverted: 0,
                category_mask: 0,
                category_anyof_mask: PAGE_IS_PRESENT | PAGE_IS_SWAPPED,
                return_mask: PAGE_IS_PRESENT | PAGE_IS_SWAPPED,
            };
            let n = loop {
                // SAFETY: `arg` is a fully initialised pm_scan_arg whose `size` is its
                // own size; `vec` points to `regions`, a live buffer of `vec_len`
                // page_region structs that the kernel fills and that outlives the call.
                // The fd is the open pagemap file.
                let ret = unsafe { libc::ioctl(self.file.as_raw_fd(), PAGEMAP_SCAN, &mut arg) };
                if ret >= 0 {
                    break ret.unsigned_abs() as usize;
                }
                let e = std::io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EINTR) => continue,
                    Some(libc::ENOTTY) | Some(libc::EINVAL) | Some(libc::EOPNOTSUPP) => {
                        return Err(ScanIoctlError::Unsupported)
                    }
                    Some(libc::ESRCH) | Some(libc::ENOENT) => {
                        return Err(ScanIoctlError::Other(PagemapError::Vanished {
                            pid: self.pid,
                        }))
                    }
                    _ => {
                        return Err(ScanIoctlError::Other(PagemapError::Read {
                            pid: self.pid,
                            addr: start,
                            source: e,
                        }))
                    }
                }
            };
            for r in &regions[..n.min(regions.len())] {
                let state = if r.categories & PAGE_IS_PRESENT != 0 {
                    PageState::Resident
                } else {
                    PageState::Swapped
                };
                push_range(out, AddrRange::new(r.start, r.end), state);
            }
            if arg.walk_end <= start {
                break; // no progress (a process whose mm is gone)
            }
            start = arg.walk_end;
        }
        Ok(())
    }
}

enum ScanIoctlError {
    Unsupported,
    Other(PagemapError),
}

// From include/uapi/linux/fs.h.
const PAGE_IS_PRESENT: u64 = 1 << 3;
const PAGE_IS_SWAPPED: u64 = 1 << 4;

#[repr(C)]
#[derive(Debug, Default)]
struct PmScanArg {
    size: u64,
    flags: u64,
    start: u64,
    end: u64,
    walk_end: u64,
    vec: u64,
    vec_len: u64,
    max_pages: u64,
    category_inverted: u64,
    category_mask: u64,
    category_anyof_mask: u64,
    return_mask: u64,
}

#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
struct PageRegion {
    start: u64,
    end: u64,
    categories: u64,
}

/// _IOWR('f', 16, struct pm_scan_arg)
const PAGEMAP_SCAN: libc::c_ulong = (3 << 30)
    | ((std::mem::size_of::<PmScanArg>() as libc::c_ulong) << 16)
    | ((b'f' as libc::c_ulong) << 8)
    | 16;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::maps::read_maps;

    #[test]
    fn ioctl_number_matches_the_kernel_header() {
        assert_eq!(std::mem::size_of::<PmScanArg>(), 96);
        assert_eq!(PAGEMAP_SCAN, 0xC060_6610);
    }

    #[test]
    fn entry_states() {
        assert_eq!(entry_state(PM_PRESENT | 1234), Some(PageState::Resident));
        assert_eq!(entry_state(PM_SWAPPED | 5), Some(PageState::Swapped));
        assert_eq!(entry_state(0), None);
        // Soft-dirty or exclusive bits alone do not make a page present.
        assert_eq!(entry_state(1 << 55 | 1 << 56), None);
    }

    #[test]
    fn coalesces_runs_and_breaks_on_holes_and_state_changes() {
        let p = 4096;
        let e = [
            PM_PRESENT, PM_PRESENT, 0, PM_SWAPPED, PM_SWAPPED, PM_PRESENT,
        ];
        let mut out = Vec::new();
        coalesce_entries(0x10000, p, &e, &mut out);
        assert_eq!(
            out,
            vec![
                PageRange {
                    range: AddrRange::new(0x10000, 0x12000),
                    state: PageState::Resident
                },
                PageRange {
                    range: AddrRange::new(0x13000, 0x15000),
                    state: PageState::Swapped
                },
                PageRange {
                    range: AddrRange::new(0x15000, 0x16000),
                    state: PageState::Resident
                },
            ]
        );
        // A second call continuing at the next page extends the last range.
        coalesce_entries(0x16000, p, &[PM_PRESENT], &mut out);
        assert_eq!(out.len(), 3);
        assert_eq!(out[2].range.end, 0x17000);
    }

    /// Both backends must agree on a buffer whose residency we control:
    /// every other 4-page block touched.
    #[test]
    fn ioctl_and_pread_agree_on_own_memory() {
        let page = crate::page_bytes();
        let len = 256 * page;
        let mut v = vec![0u8; len + page]; // calloc: untouched pages are absent
        let base = (v.as_ptr() as usize).div_ceil(page) * page;
        let off = base - v.as_ptr() as usize;
        for block in (0..64).step_by(2) {
            for p in 0..4 {
                v[off + (block * 4 + p) * page] = 1;
            }
        }
        let range = AddrRange::new(base as u64, (base + len) as u64);
        let mut a = Pagemap::open_with(std::process::id(), ScanBackend::Ioctl).expect("open");
        let mut b = Pagemap::open_with(std::process::id(), ScanBackend::Pread).expect("open");
        let ra = a.scan(range).expect("scan ioctl");
        let rb = b.scan(range).expect("scan pread");
        assert_eq!(ra, rb, "backend {:?} disagrees with pread", a.backend());
        let res = Residency::of(&rb);
        assert!(res.resident_pages >= 128, "touched 128 pages, saw {res:?}");
        assert_eq!(res.swapped_pages, 0);
        std::hint::black_box(&v);
    }

    #[test]
    fn scans_own_anonymous_mappings() {
        let maps: Vec<_> = read_maps(std::process::id())
            .expect("own maps")
            .into_iter()
            .filter(|m| m.is_private_anonymous())
            .collect();
        let mut pm = Pagemap::open(std::process::id()).expect("open");
        let ranges = pm.scan_mappings(&maps).expect("scan");
        assert!(Residency::of(&ranges).resident_pages > 0);
        assert!(ranges
            .windows(2)
            .all(|w| w[0].range.end <= w[1].range.start));
    }
}

/// How many pages of this process's own `[addr, addr + len)` are in memory,
/// as mincore(2) sees them: for anonymous memory that includes pages in the
/// swap cache (brought back but not yet touched), which pagemap shows as
/// swapped. `addr` must be page-aligned.
pub fn mincore_own(addr: *const u8, len: usize) -> std::io::Result<usize> {
    let page = crate::page_bytes();
    let mut vec = vec![0u8; len.div_ceil(page)];
    // SAFETY: `vec` has one byte per page of the range, as mincore requires; the
    // kernel checks the range itself and fails with ENOMEM if it is not mapped,
    // and it does not dereference `addr` on our behalf.
    let ret = unsafe { libc::mincore(addr as *mut libc::c_void, len, vec.as_mut_ptr()) };
    if ret != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(vec.iter().filter(|b| **b & 1 != 0).count())
}

#[cfg(test)]
mod mincore_tests {
    use super::*;

    #[test]
    fn touched_pages_are_in_core() {
        let page = crate::page_bytes();
        let mut v = vec![0u8; 65 * page];
        let base = (v.as_ptr() as usize).div_ceil(page) * page;
        let off = base - v.as_ptr() as usize;
        for p in 0..64 {
            v[off + p * page] = 1;
        }
        let n = mincore_own(base as *const u8, 64 * page).expect("mincore");
        assert_eq!(n, 64);
        assert!(
            mincore_own(std::ptr::null(), page).is_err(),
            "page 0 is never mapped"
        );
    }
}
