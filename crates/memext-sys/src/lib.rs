//! memext's kernel interfaces: the only crate of memext (besides the future C ABI)
//! that holds `unsafe`. It owns the system calls that act on another process's
//! memory — pidfd_open, process_madvise, /proc/PID/pagemap and its PAGEMAP_SCAN
//! ioctl — and swapon/swapoff. It knows nothing of cgroups, containers or policy.
//!
//! A process that exits while we look at it is a normal outcome: every call that
//! can meet it reports [`Vanished`](pidfd::PidfdError::Vanished)-style variants
//! that callers treat as "nothing to do", never as failures to log loudly.

// Addresses and lengths of another process are u64 here and usize in the
// kernel's structs; the two are the same width on every target memext builds for.
#[cfg(not(target_pointer_width = "64"))]
compile_error!("memext supports 64-bit Linux only");

pub mod madvise;
pub mod maps;
pub mod pagemap;
pub mod peer;
pub mod pidfd;
pub mod populate;
pub mod procstat;
pub mod refs;
pub mod sched;
pub mod swap;

/// Lets a write to a closed pipe end this process quietly, as it ends a C
/// tool (`memext check-config | head`), instead of an EPIPE error that
/// `println!` turns into a panic. For one-shot commands only: a server, whose
/// clients may hang up mid-reply, must keep the default Rust sets (ignored).
pub fn end_quietly_on_closed_pipe() {
    // SAFETY: signal(2) with SIG_DFL installs no handler of ours (no code runs
    // in signal context) and only resets the disposition Rust's runtime set
    // to SIG_IGN at start; it touches no memory of this process.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Makes a system call (`call`, returning what the kernel returned) again
/// while it is interrupted by a signal (EINTR); its result, or its error.
pub(crate) fn retry_on_eintr(mut call: impl FnMut() -> i64) -> std::io::Result<u64> {
    loop {
        let ret = call();
        if ret >= 0 {
            return Ok(ret.unsigned_abs());
        }
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EINTR) {
            return Err(err);
        }
    }
}

/// A process id as the kernel gives it (always > 0).
pub type Pid = u32;

/// The size of one base page on this machine, in bytes.
pub fn page_size() -> u64 {
    rustix::param::page_size() as u64
}

/// The page size as a `usize`, for buffers of this process.
pub fn page_bytes() -> usize {
    rustix::param::page_size()
}

/// A half-open range of virtual addresses `[start, end)` in some process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct AddrRange {
    pub start: u64,
    pub end: u64,
}

impl AddrRange {
    pub fn new(start: u64, end: u64) -> Self {
        debug_assert!(start <= end, "range start {start:#x} after end {end:#x}");
        Self { start, end }
    }

    pub fn len(&self) -> u64 {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.start >= self.end
    }
}
