//! cgroup access for memext: one [`MemoryCgroup`] trait with a v1 and a v2
//! implementation, dispatched by [`AnyCgroup`] and chosen by probing the mounted
//! hierarchy ([`Hierarchy::probe`]). The root is always injectable, so every
//! part is tested on checked-in fake trees as well as on real cgroups.
//!
//! Control files are opened relative to the cgroup's directory fd, without
//! following symlinks. A cgroup that disappears between two reads gives
//! [`CgroupError::Vanished`], a normal outcome. This crate does not decide what
//! to write; it never writes anything it was not asked to.
#![forbid(unsafe_code)]

mod dirfd;
pub mod hierarchy;
pub mod parse;
mod path;
mod procs;
pub mod threads;
pub mod v1;
pub mod v2;
mod wake;

use std::time::Duration;

pub use hierarchy::{Hierarchy, HierarchyError};
pub use parse::{Limit, ParseError, Pressure, PressureLine};
pub use path::{CgroupPath, PathError};
pub use threads::{GroupWeight, ThreadGroup, ThreadGroupError};
pub use wake::{ThresholdRegistrar, WakeEvent, WakeSource};

/// Control files read by this process so far (every read of a cgroup file
/// through this crate): what an idle context costs, counted.
static READS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

pub(crate) fn count_read() {
    READS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

/// How many cgroup control files this process has read through this crate.
pub fn reads() -> u64 {
    READS.load(std::sync::atomic::Ordering::Relaxed)
}

/// Which cgroup version holds the memory controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Version {
    V1,
    V2,
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Version::V1 => "v1",
            Version::V2 => "v2",
        })
    }
}

/// A memory knob that memext may write: the limits, and v1's OOM-kill switch
/// (`memory.oom_control`, read and written as `Limit::Bytes(0 or 1)`), which
/// memext sets while it holds a v1 context at a low limit so that a wake that
/// outruns the limit's raise pauses the task instead of killing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum LimitKnob {
    /// v1 `memory.limit_in_bytes`
    V1Limit,
    /// v1 `memory.memsw.limit_in_bytes` (memory + swap)
    V1MemswLimit,
    /// v1 `memory.oom_control` oom_kill_disable (0 or 1)
    V1OomKillDisable,
    /// v1 `memory.swappiness` (0-200): at 0 the reclaim of a limit above the
    /// cgroup (its own or a parent's) takes none of its anonymous or shared
    /// memory, only its page cache; the host's global reclaim still may.
    V1Swappiness,
    /// v2 `memory.high` (throttle and reclaim above)
    High,
    /// v2 `memory.max` (hard limit)
    Max,
    /// v2 `memory.low` (best-effort protection)
    Low,
    /// v2 `memory.min` (hard protection)
    Min,
    /// v2 `memory.swap.max`
    SwapMax,
    /// v2 `memory.zswap.max`
    ZswapMax,
    /// v1 `cpu.shares` (in the cpu controller's hierarchy): relative CPU
    /// weight among siblings, default 1024.
    V1CpuShares,
    /// v2 `cpu.weight`: relative CPU weight among siblings, 1-10000, default 100.
    CpuWeight,
    /// v1 `cpu.cfs_quota_us` (in the cpu controller's hierarchy): CPU time
    /// the cgroup may use per period (`cpu.cfs_period_us`, 100 ms unless
    /// someone set it), read and written as `Limit::Bytes(µs)`, or
    /// `Limit::Max` for none (the kernel's -1).
    V1CfsQuota,
    /// v2 `cpu.max`'s quota (its first field; writing it alone keeps the
    /// period), as `Limit::Bytes(µs)` or `Limit::Max`.
    CpuMax,
    /// v1 `cpu.idle` (in the cpu controller's hierarchy; kernel 5.15 and
    /// later): 1 runs the cgroup's tasks as SCHED_IDLE against its siblings
    /// (the least weight, and a waking task of a sibling that is not idle
    /// preempts them at once), 0 not. While it is 1 the kernel refuses a
    /// write of `cpu.shares` and shows it as 3; back at 0 the shares are
    /// what they were.
    V1CpuIdle,
    /// v2 `cpu.idle` (0 or 1), as `V1CpuIdle`.
    CpuIdle,
    /// v1 `freezer.state` (in the freezer hierarchy), read and written as
    /// `Limit::Bytes(1)` for FROZEN (or FREEZING) and `Limit::Bytes(0)` for THAWED.
    V1Freezer,
    /// v2 `cgroup.freeze` (0 or 1).
    Freeze,
}

impl LimitKnob {
    /// The control file name and the version that has it.
    pub fn file(self) -> (&'static str, Version) {
        match self {
            LimitKnob::V1Limit => ("memory.limit_in_bytes", Version::V1),
            LimitKnob::V1MemswLimit => ("memory.memsw.limit_in_bytes", Version::V1),
            LimitKnob::V1OomKillDisable => ("memory.oom_control", Version::V1),
            LimitKnob::V1Swappiness => ("memory.swappiness", Version::V1),
            LimitKnob::High => ("memory.high", Version::V2),
            LimitKnob::Max => ("memory.max", Version::V2),
            LimitKnob::Low => ("memory.low", Version::V2),
            LimitKnob::Min => ("memory.min", Version::V2),
            LimitKnob::SwapMax => ("memory.swap.max", Version::V2),
            LimitKnob::ZswapMax => ("memory.zswap.max", Version::V2),
            LimitKnob::V1CpuShares => ("cpu.shares", Version::V1),
            LimitKnob::CpuWeight => ("cpu.weight", Version::V2),
            LimitKnob::V1CfsQuota => ("cpu.cfs_quota_us", Version::V1),
            LimitKnob::CpuMax => ("cpu.max", Version::V2),
            LimitKnob::V1CpuIdle => ("cpu.idle", Version::V1),
            LimitKnob::CpuIdle => ("cpu.idle", Version::V2),
            LimitKnob::V1Freezer => ("freezer.state", Version::V1),
            LimitKnob::Freeze => ("cgroup.freeze", Version::V2),
        }
    }
}

/// The control file of `knob`, or `Unsupported` if cgroup `path` (on `have`) lacks it.
pub(crate) fn knob_file(
    knob: LimitKnob,
    path: &CgroupPath,
    have: Version,
) -> Result<&'static str, CgroupError> {
    match knob.file() {
        (file, needs) if needs == have => Ok(file),
        (file, needs) => Err(CgroupError::Unsupported {
            path: path.clone(),
            knob: file.into(),
            needs,
            have,
        }),
    }
}

impl LimitKnob {
    /// Whether the knob's value is a byte count (all but the OOM switch, the
    /// CPU weights, quotas and idle switches, and the freezers).
    pub fn is_bytes(self) -> bool {
        !matches!(
            self,
            LimitKnob::V1OomKillDisable
                | LimitKnob::V1Swappiness
                | LimitKnob::V1CpuShares
                | LimitKnob::CpuWeight
                | LimitKnob::V1CfsQuota
                | LimitKnob::CpuMax
                | LimitKnob::V1CpuIdle
                | LimitKnob::CpuIdle
                | LimitKnob::V1Freezer
                | LimitKnob::Freeze
        )
    }
}

impl std::fmt::Display for LimitKnob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.file().0)
    }
}

/// Memory use of a cgroup and everything below it, the same for v1 and v2.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct MemoryStats {
    /// Charged memory (v1 `memory.usage_in_bytes`, v2 `memory.current`).
    pub usage_bytes: u64,
    /// Anonymous memory resident in DRAM.
    pub anon_bytes: u64,
    /// Page cache resident in DRAM.
    pub file_bytes: u64,
    /// Memory held in swap (including zswap).
    pub swap_bytes: u64,
    pub pgfault: u64,
    pub pgmajfault: u64,
    pub workingset_refault_anon: u64,
    pub workingset_refault_file: u64,
    /// The cgroup's own swap limit (v2 `memory.swap.max`, as Kubernetes'
    /// LimitedSwap writes it per container); None when unlimited or absent.
    pub swap_max: Option<u64>,
}

impl MemoryStats {
    /// Bytes resident in DRAM.
    pub fn resident_bytes(&self) -> u64 {
        self.anon_bytes + self.file_bytes
    }

    /// Anonymous bytes that cannot leave DRAM because the cgroup's swap
    /// limit has no room for them (page cache can always be dropped).
    pub fn anon_beyond_swap_limit(&self) -> u64 {
        self.swap_max.map_or(0, |max| {
            self.anon_bytes
                .saturating_sub(max.saturating_sub(self.swap_bytes))
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CgroupError {
    #[error("cgroup {path} no longer exists")]
    Vanished { path: CgroupPath },
    #[error("cannot read {file} of cgroup {path}")]
    Read {
        path: CgroupPath,
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {value:?} to {file} of cgroup {path}")]
    Write {
        path: CgroupPath,
        file: String,
        value: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{file} of cgroup {path} is malformed")]
    Parse {
        path: CgroupPath,
        file: String,
        #[source]
        source: ParseError,
    },
    #[error("{file} of cgroup {path} lacks the field {field}")]
    MissingField {
        path: CgroupPath,
        file: String,
        field: &'static str,
    },
    #[error("{knob} is a cgroup {needs} knob; cgroup {path} is on {have}")]
    Unsupported {
        path: CgroupPath,
        knob: String,
        needs: Version,
        have: Version,
    },
    #[error("swappiness {value} for cgroup {path} is out of range 0..=200")]
    BadSwappiness { path: CgroupPath, value: u32 },
}

/// The outcome of asking the kernel to reclaim from a cgroup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reclaimed {
    /// The whole amount was reclaimed.
    All,
    /// The kernel gave up early (EAGAIN): less was reclaimed.
    Partial,
}

/// What memext reads from and writes to one cgroup, whatever its version.
pub trait MemoryCgroup {
    fn path(&self) -> &CgroupPath;
    fn version(&self) -> Version;
    /// Pids of the processes directly in this cgroup.
    fn procs(&self) -> Result<Vec<u32>, CgroupError>;
    /// Pids of the processes in this cgroup and every cgroup below it.
    fn procs_recursive(&self) -> Result<Vec<u32>, CgroupError>;
    fn memory(&self) -> Result<MemoryStats, CgroupError>;
    /// CPU time used by the cgroup since its creation; `None` where no CPU
    /// accounting hierarchy holds this cgroup (v1 without cpuacct).
    fn cpu_usage(&self) -> Result<Option<Duration>, CgroupError>;
    /// Memory pressure (PSI), `None` where the kernel does not provide it.
    fn memory_pressure(&self) -> Result<Option<Pressure>, CgroupError>;
    fn read_limit(&self, knob: LimitKnob) -> Result<Limit, CgroupError>;
    fn write_limit(&self, knob: LimitKnob, value: Limit) -> Result<(), CgroupError>;
    /// v1 `memory.swappiness`; `None` on v2, which has no such knob.
    fn swappiness(&self) -> Result<Option<u32>, CgroupError>;
    fn set_swappiness(&self, value: u32) -> Result<(), CgroupError>;
    /// v2 `memory.reclaim`: proactive reclaim of `bytes` from this cgroup.
    fn reclaim(&self, bytes: u64) -> Result<Reclaimed, CgroupError>;
}

/// A cgroup of either version.
// One per tracked context, a few hundred bytes: not worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum AnyCgroup {
    V1(v1::V1Cgroup),
    V2(v2::V2Cgroup),
}

impl AnyCgroup {
    /// Registers a kernel event that fires when the cgroup starts using
    /// memory again: on v1 a usage threshold `delta` bytes above its usage
    /// now, on v2 a PSI trigger on its `memory.pressure`.
    pub fn wake_event(&self, delta: u64) -> Result<WakeEvent, CgroupError> {
        match self {
            AnyCgroup::V1(c) => c.usage_threshold(delta),
            AnyCgroup::V2(c) => c.pressure_trigger(),
        }
    }

    /// Where a v1 cgroup's wake events are registered from another thread
    /// ([`ThresholdRegistrar`]); `None` on v2, whose PSI triggers cost no
    /// grace period to make.
    pub fn threshold_registrar(&self) -> Option<Result<ThresholdRegistrar, CgroupError>> {
        match self {
            AnyCgroup::V1(c) => Some(c.threshold_registrar()),
            AnyCgroup::V2(_) => None,
        }
    }

    /// Registers a kernel event that fires each time a task of the cgroup
    /// enters the OOM wait at its limit (v1 `memory.oom_control`; memext
    /// turns OOM kills off in the contexts it limits, so such a task pauses
    /// until the limit goes up). `None` on v2: its `memory.high` throttles
    /// and never pauses a task for good.
    pub fn oom_event(&self) -> Option<Result<WakeEvent, CgroupError>> {
        match self {
            AnyCgroup::V1(c) => Some(c.oom_event()),
            AnyCgroup::V2(_) => None,
        }
    }

    /// How many times a charge met the cgroup's limit and the kernel
    /// reclaimed in the task that charged (v1 `memory.failcnt`; v2
    /// `memory.events` `max`, which counts the cgroup and all below it).
    /// It rises while the cgroup's tasks make their own room.
    pub fn limit_hits(&self) -> Result<u64, CgroupError> {
        match self {
            AnyCgroup::V1(c) => c.failcnt(),
            AnyCgroup::V2(c) => c.max_events(),
        }
    }

    /// Whether a task of the cgroup waits in the v1 OOM wait now
    /// (`memory.oom_control`'s `under_oom`); false on v2, where nothing
    /// waits so.
    pub fn under_oom(&self) -> Result<bool, CgroupError> {
        match self {
            AnyCgroup::V1(c) => c.under_oom(),
            AnyCgroup::V2(_) => Ok(false),
        }
    }
}

macro_rules! dispatch {
    ($self:ident, $c:ident => $e:expr) => {
        match $self {
            AnyCgroup::V1($c) => $e,
            AnyCgroup::V2($c) => $e,
        }
    };
}

impl MemoryCgroup for AnyCgroup {
    fn path(&self) -> &CgroupPath {
        dispatch!(self, c => c.path())
    }
    fn version(&self) -> Version {
        dispatch!(self, c => c.version())
    }
    fn procs(&self) -> Result<Vec<u32>, CgroupError> {
        dispatch!(self, c => c.procs())
    }
    fn procs_recursive(&self) -> Result<Vec<u32>, CgroupError> {
        dispatch!(self, c => c.procs_recursive())
    }
    fn memory(&self) -> Result<MemoryStats, CgroupError> {
        dispatch!(self, c => c.memory())
    }
    fn cpu_usage(&self) -> Result<Option<Duration>, CgroupError> {
        dispatch!(self, c => c.cpu_usage())
    }
    fn memory_pressure(&self) -> Result<Option<Pressure>, CgroupError> {
        dispatch!(self, c => c.memory_pressure())
    }
    fn read_limit(&self, knob: LimitKnob) -> Result<Limit, CgroupError> {
        dispatch!(self, c => c.read_limit(knob))
    }
    fn write_limit(&self, knob: LimitKnob, value: Limit) -> Result<(), CgroupError> {
        dispatch!(self, c => c.write_limit(knob, value))
    }
    fn swappiness(&self) -> Result<Option<u32>, CgroupError> {
        dispatch!(self, c => c.swappiness())
    }
    fn set_swappiness(&self, value: u32) -> Result<(), CgroupError> {
        dispatch!(self, c => c.set_swappiness(value))
    }
    fn reclaim(&self, bytes: u64) -> Result<Reclaimed, CgroupError> {
        dispatch!(self, c => c.reclaim(bytes))
    }
}
