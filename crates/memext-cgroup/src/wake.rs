//! Kernel wake events for a cgroup: a file descriptor that becomes readable
//! when a sleeping context starts using memory again, so that nobody has to
//! poll its counters.
//!
//! - cgroup v1: a memory usage threshold (`cgroup.event_control` with an
//!   eventfd on `memory.usage_in_bytes`, a little above the usage now; the
//!   kernel checks it as pages are charged and fires at the crossing) and,
//!   on the same eventfd, `memory.pressure_level` at `low`: a context held
//!   at its limit cannot grow past it, but every fault it takes there makes
//!   the kernel reclaim in it, and reclaim raises a pressure event.
//! - cgroup v2: a PSI trigger on the cgroup's `memory.pressure` (`some`
//!   stall over a window). v2 has no usage thresholds; a context that faults
//!   its pages back in stalls on them.
//!
//! - cgroup v1, beside either: the OOM notifier (`memory.oom_control`), which
//!   fires when a task starts waiting at the limit with OOM kills off. Such
//!   a task uses no CPU and charges nothing: no other signal shows it.
//!
//! A registration lives as long as its descriptor: dropping the [`WakeEvent`]
//! removes it from the kernel.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::event::{eventfd, EventfdFlags};
use rustix::fs::OFlags;

use crate::dirfd::CgroupDir;
use crate::parse::parse_u64;
use crate::CgroupError;

/// Which kernel mechanism a [`WakeEvent`] uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WakeSource {
    /// v1: `memory.usage_in_bytes` crossed a threshold, or the cgroup
    /// reclaims (`memory.pressure_level`); an eventfd, readable.
    UsageThreshold,
    /// `memory.pressure` trigger (priority data, `POLLPRI`).
    Pressure,
    /// v1: a task entered the OOM wait at the cgroup's limit
    /// (`memory.oom_control`); an eventfd, readable.
    OutOfMemory,
}

impl std::fmt::Display for WakeSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            WakeSource::UsageThreshold => "threshold",
            WakeSource::Pressure => "psi",
            WakeSource::OutOfMemory => "oom",
        })
    }
}

/// A registered wake event of one cgroup.
#[derive(Debug)]
pub struct WakeEvent {
    fd: OwnedFd,
    source: WakeSource,
    /// The usage a v1 threshold fires above.
    threshold: Option<u64>,
}

impl AsFd for WakeEvent {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl WakeEvent {
    pub fn source(&self) -> WakeSource {
        self.source
    }

    /// The usage (bytes) above which a v1 usage threshold fires; None for a
    /// pressure trigger.
    pub fn threshold(&self) -> Option<u64> {
        self.threshold
    }

    /// Whether to wait for priority data (`POLLPRI`) rather than readability.
    pub fn wants_priority(&self) -> bool {
        self.source == WakeSource::Pressure
    }

    /// Consumes a fired event, so a level-triggered wait does not report it
    /// again (an eventfd stays readable until read; a PSI trigger resets
    /// itself when polled).
    pub fn clear(&self) {
        if self.source != WakeSource::Pressure {
            let mut counter = [0u8; 8];
            // Non-blocking: nothing to read is as good as read.
            let _ = rustix::io::read(&self.fd, &mut counter[..]);
        }
    }
}

/// A non-blocking eventfd for a registration on `memory`'s cgroup.
fn new_eventfd(memory: &CgroupDir) -> Result<OwnedFd, CgroupError> {
    eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK).map_err(|e| CgroupError::Read {
        path: memory.path.clone(),
        file: "eventfd".into(),
        source: e.into(),
    })
}

/// Registers a usage threshold `delta` bytes above the cgroup's usage now
/// (v1).
pub(crate) fn usage_threshold(memory: &CgroupDir, delta: u64) -> Result<WakeEvent, CgroupError> {
    let usage = memory.read_with("memory.usage_in_bytes", parse_u64)?;
    let efd = new_eventfd(memory)?;
    // The kernel takes what it needs of the usage file during the write;
    // the descriptor can close right after.
    let usage_fd = memory.open_fd("memory.usage_in_bytes", OFlags::RDONLY)?;
    let threshold = usage.saturating_add(delta);
    let line = format!(
        "{} {} {threshold}",
        rustix::fd::AsRawFd::as_raw_fd(&efd),
        rustix::fd::AsRawFd::as_raw_fd(&usage_fd),
    );
    memory.write("cgroup.event_control", &line)?;
    // Optional: a kernel without vmpressure still has the threshold.
    if let Ok(level_fd) = memory.open_fd("memory.pressure_level", OFlags::RDONLY) {
        let line = format!(
            "{} {} low",
            rustix::fd::AsRawFd::as_raw_fd(&efd),
            rustix::fd::AsRawFd::as_raw_fd(&level_fd)
        );
        memory.write("cgroup.event_control", &line)?;
    }
    Ok(WakeEvent {
        fd: efd,
        source: WakeSource::UsageThreshold,
        threshold: Some(threshold),
    })
}

/// A v1 cgroup's usage thresholds, registered apart from its handle: the
/// kernel waits for an RCU grace period in each registration
/// (`__mem_cgroup_usage_register_event`: 16 ms median, 81 ms p90, up to
/// 0.78 s in a bench/faas run, where the daemon's loop spent 13% of its
/// time there, session 80), so the daemon registers them on threads of its
/// own. Holds its own descriptor of the cgroup's directory.
#[derive(Debug)]
pub struct ThresholdRegistrar(CgroupDir);

impl ThresholdRegistrar {
    pub(crate) fn new(memory: &CgroupDir) -> Result<Self, CgroupError> {
        memory.try_clone().map(Self)
    }

    /// Registers a usage threshold `delta` bytes above the usage now, as
    /// [`crate::AnyCgroup::wake_event`] does on v1 (with the pressure level).
    pub fn register(&self, delta: u64) -> Result<WakeEvent, CgroupError> {
        usage_threshold(&self.0, delta)
    }
}

/// Registers an event at each entry of a task of the cgroup into the OOM
/// wait (v1 `cgroup.event_control` with an eventfd on `memory.oom_control`;
/// the kernel signals it when the first task of an episode starts waiting).
/// Unlike a threshold it stays armed: it fires again at the next episode.
pub(crate) fn oom_event(memory: &CgroupDir) -> Result<WakeEvent, CgroupError> {
    let efd = new_eventfd(memory)?;
    let oom_fd = memory.open_fd("memory.oom_control", OFlags::RDONLY)?;
    let line = format!(
        "{} {}",
        rustix::fd::AsRawFd::as_raw_fd(&efd),
        rustix::fd::AsRawFd::as_raw_fd(&oom_fd),
    );
    memory.write("cgroup.event_control", &line)?;
    Ok(WakeEvent {
        fd: efd,
        source: WakeSource::OutOfMemory,
        threshold: None,
    })
}

/// Stall on memory that fires a pressure trigger: 10 ms within the window.
const STALL_US: u64 = 10_000;

/// Registers a PSI trigger on the cgroup's `memory.pressure`: a 1 s window
/// where the kernel allows it (CAP_SYS_RESOURCE), else 2 s (an unprivileged
/// trigger's windows are whole multiples of 2 s).
pub(crate) fn pressure_trigger(dir: &CgroupDir) -> Result<WakeEvent, CgroupError> {
    let mut last = None;
    for window_us in [1_000_000u64, 2_000_000] {
        let fd = dir.open_fd("memory.pressure", OFlags::RDWR | OFlags::NONBLOCK)?;
        let trigger = format!("some {STALL_US} {window_us}");
        match rustix::io::write(&fd, trigger.as_bytes()) {
            Ok(_) => {
                return Ok(WakeEvent {
                    fd,
                    source: WakeSource::Pressure,
                    threshold: None,
                })
            }
            Err(e) => last = Some((trigger, e)),
        }
    }
    let (value, e) = last.expect("two attempts were made");
    Err(CgroupError::Write {
        path: dir.path.clone(),
        file: "memory.pressure".into(),
        value,
        source: e.into(),
    })
}
