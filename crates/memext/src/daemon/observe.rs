//! The observe step: typed samples of the selected contexts and the facts of
//! the host, read from a [`Host`] given to it (proc root, cgroup hierarchy,
//! clock), so that it runs as well on a checked-in fake tree as on `/`.
//!
//! [`Observer`] is what the loop talks to. [`PollingObserver`] reads every
//! context each tick and polls the watched ones' CPU time between ticks; an
//! event-driven observer (kernel wake events instead of polling) plugs in
//! beside it. Must not: write anything, or decide anything (that is the
//! engine's).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use memext_cgroup::{
    AnyCgroup, CgroupError, CgroupPath, Hierarchy, Limit, LimitKnob, MemoryCgroup, Version,
};
use memext_engine::context::{MemorySample, Sample};
use memext_engine::engine::HostFacts;
use memext_engine::touch::Touch;
use memext_engine::{ContextId, Instant};
use memext_sys::pagemap::{PageState, Pagemap, ScanBackend};

use crate::config::Config;
use crate::contexts::{discover, DiscoverOptions, MemoryContext};

/// The engine's time: monotonic, from the daemon's start.
pub trait Clock: Send + Sync {
    fn now(&self) -> Instant;
    /// Blocks for `d` (a fake clock advances instead).
    fn sleep(&self, d: Duration);
}

/// The real clock: CLOCK_MONOTONIC, time since boot (less suspend). Not
/// since the daemon's start: instants the engine saved (wakes, working-set
/// heat) stay comparable for a daemon restarted in the same boot.
pub struct MonotonicClock;

impl MonotonicClock {
    pub fn start() -> Self {
        Self
    }
}

impl Clock for MonotonicClock {
    fn now(&self) -> Instant {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
        // A monotonic clock is never negative.
        Duration::new(
            u64::try_from(t.tv_sec).unwrap_or(0),
            u32::try_from(t.tv_nsec).unwrap_or(0),
        )
    }
    fn sleep(&self, d: Duration) {
        std::thread::sleep(d);
    }
}

/// Where the daemon reads the host from.
pub struct Host {
    /// The proc file system (`/proc`).
    pub proc_root: PathBuf,
    /// The cgroup hierarchy (v1 or v2), rooted where the config says.
    pub hierarchy: Hierarchy,
    pub clock: Arc<dyn Clock>,
}

impl Host {
    /// The host as the configuration and the hierarchy describe it, with the
    /// real clock.
    pub fn new(cfg: &Config, hierarchy: Hierarchy) -> Self {
        Self {
            proc_root: cfg.host.proc_root.clone(),
            hierarchy,
            clock: Arc::new(MonotonicClock::start()),
        }
    }

    fn read_proc(&self, file: &str) -> anyhow::Result<String> {
        let path = self.proc_root.join(file);
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))
    }
}

/// One context's cgroup, as the observer reads it.
pub struct Watched<'a> {
    pub id: &'a ContextId,
    pub cg: &'a AnyCgroup,
    /// Poll it (its CPU every `daemon.poll`) even where a kernel event
    /// exists: memext is still moving its pages (its usage is not where it
    /// will settle, so no threshold can be placed yet), or it is held, mapped
    /// back for a predicted wake that will take no fault at all.
    pub poll: bool,
    /// Its memory usage when last sampled (a usage threshold placed well
    /// above it is placed again).
    pub usage: u64,
}

/// A between-ticks reading of a watched context.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuReading {
    pub id: ContextId,
    pub at: Instant,
    pub cpu: Duration,
}

/// What the observer saw of the watched contexts between two ticks.
#[derive(Debug, Clone, PartialEq)]
pub enum Seen {
    /// A fresh CPU reading of a context without a kernel wake event.
    Cpu(CpuReading),
    /// The kernel's wake event of this context fired: sample it now.
    Fired(ContextId),
    /// A task of this context entered the kernel's OOM wait at its limit:
    /// it waits, using no CPU, until the limit goes up.
    OutOfMemory(ContextId),
}

/// How a watched context's wake is noticed (`memext status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WakePath {
    /// Its CPU time is read every `daemon.poll`.
    Poll,
    /// A kernel event: a v1 usage threshold or a PSI trigger.
    Event(memext_cgroup::WakeSource),
}

impl std::fmt::Display for WakePath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WakePath::Poll => f.write_str("poll"),
            WakePath::Event(s) => s.fmt(f),
        }
    }
}

/// What the daemon's loop reads through.
pub trait Observer {
    fn host(&self) -> &Host;
    /// The memory contexts the policy selects, as found now.
    fn discover(&mut self, cfg: &Config) -> anyhow::Result<Vec<MemoryContext>>;
    /// What `discover` finds, or None when the observer knows nothing can
    /// have changed since its last call (no cgroup made or removed).
    fn discover_changes(&mut self, cfg: &Config) -> anyhow::Result<Option<Vec<MemoryContext>>> {
        self.discover(cfg).map(Some)
    }
    /// A full sample of one context (Vanished when its cgroup is gone).
    fn sample(&mut self, cg: &AnyCgroup) -> Result<Sample, CgroupError>;
    /// The resident private anonymous ranges of each of `pids` (processes
    /// that vanish meanwhile are left out).
    fn working_set(&mut self, pids: &[u32]) -> Vec<(u32, Vec<(u64, u64)>)>;
    /// Whether any process of the context is exiting or killed (its teardown
    /// looks like a wake; it must not be frozen).
    fn is_going(&mut self, cg: &AnyCgroup) -> bool {
        let root = &self.host().proc_root;
        cg.procs_recursive().map_or(true, |pids| {
            pids.iter()
                .any(|&p| memext_sys::procstat::is_going(root, p))
        })
    }
    /// What the processes of the context touched since the last ask, and
    /// what they hold in DRAM (`memext_sys::refs`: their page tables'
    /// accessed bits, read and cleared); asked only where its CPU says it
    /// was called as it rested with its pages in (`memext_engine::touch`).
    /// None when none of its processes could be read.
    fn touched(&self, cg: &AnyCgroup) -> Option<Touch> {
        let root = &self.host().proc_root;
        let mut sum: Option<Touch> = None;
        for pid in cg.procs_recursive().ok()? {
            match memext_sys::refs::take_referenced(root, pid) {
                Ok(r) => {
                    let s = sum.get_or_insert_default();
                    s.referenced += r.referenced;
                    s.resident += r.rss;
                }
                Err(memext_sys::refs::RefsError::Vanished { .. }) => {}
                Err(e) => tracing::debug!("{}: what it touched: {e}", cg.path()),
            }
        }
        sum
    }
    /// Capacity and the swap tier in front.
    fn host_facts(&mut self, cfg: &Config) -> anyhow::Result<HostFacts>;
    /// Waits at most until `deadline` (and no longer than one poll) for
    /// activity of the watched contexts; returns what it saw.
    fn watch(&mut self, watched: &[Watched<'_>], deadline: Instant) -> Vec<Seen>;
    /// Like `watch` with the same contexts as the last call, when the
    /// observer can wait without them (every one guarded by a kernel event);
    /// None: call `watch`.
    fn wait_events(&mut self, _deadline: Instant) -> Option<Vec<Seen>> {
        None
    }
    /// How the wake of watched context `id` is noticed.
    fn wake_path(&self, _id: &ContextId) -> WakePath {
        WakePath::Poll
    }
    /// Whether a kernel event stands guard over `id`, so that ticks may read
    /// it rarely.
    fn guarded(&self, _id: &ContextId) -> bool {
        false
    }
    /// Those of `tracked` a task of which waits in the kernel's OOM wait at
    /// its limit (v1, where memext turns OOM kills off): it uses no CPU and
    /// charges nothing, so nothing else shows that it wants memory. Asked at
    /// every tick; an observer with the kernel's OOM events reports them
    /// between ticks instead (`Seen::OutOfMemory`) and reads here only
    /// where it has none.
    fn out_of_memory(&mut self, tracked: &[(&ContextId, &AnyCgroup)]) -> Vec<ContextId> {
        tracked
            .iter()
            .filter(|(id, cg)| under_oom(id, cg))
            .map(|(id, _)| (*id).clone())
            .collect()
    }
}

/// The ask the engine makes of a resting context whose CPU says "call"
/// (`memext_engine::touch::Ask`): what `cg` touched, with `daemon.touches`
/// on; with it off, none (the CPU rule alone).
pub(crate) fn touch_ask<'a>(
    observer: &'a dyn Observer,
    on: bool,
    cg: &'a AnyCgroup,
) -> impl FnMut() -> Option<Touch> + 'a {
    move || if on { observer.touched(cg) } else { None }
}

/// Whether a task of `cg` waits in the v1 OOM wait (read on v1 only; false
/// when it cannot be read: a vanished cgroup is dropped at the tick).
pub(crate) fn under_oom(id: &ContextId, cg: &AnyCgroup) -> bool {
    match cg.under_oom() {
        Ok(waits) => waits,
        Err(CgroupError::Vanished { .. }) => false,
        Err(e) => {
            tracing::debug!(context = %id, "under_oom: {:#}", anyhow::Error::from(e));
            false
        }
    }
}

/// Reads every context at every tick; watched contexts' CPU every `poll`.
pub struct PollingObserver {
    host: Host,
    poll: Duration,
}

impl PollingObserver {
    pub fn new(host: Host, poll: Duration) -> Self {
        Self { host, poll }
    }
}

impl Observer for PollingObserver {
    fn host(&self) -> &Host {
        &self.host
    }

    fn discover(&mut self, cfg: &Config) -> anyhow::Result<Vec<MemoryContext>> {
        Ok(discover(
            &self.host.hierarchy,
            cfg,
            DiscoverOptions::default(),
        )?)
    }

    fn sample(&mut self, cg: &AnyCgroup) -> Result<Sample, CgroupError> {
        let pids = cg.procs_recursive()?;
        let m = cg.memory()?;
        let cpu = cg.cpu_usage()?;
        let psi = cg.memory_pressure()?;
        Ok(Sample {
            at: self.host.clock.now(),
            pids,
            memory: MemorySample {
                usage: m.usage_bytes,
                resident: m.resident_bytes(),
                swapped: m.swap_bytes,
                pgfault: m.pgfault,
                pgmajfault: m.pgmajfault,
                unswappable: m.anon_beyond_swap_limit(),
            },
            cpu,
            psi_some_avg10: psi.map(|p| p.some.avg10),
        })
    }

    fn working_set(&mut self, pids: &[u32]) -> Vec<(u32, Vec<(u64, u64)>)> {
        let root = &self.host.proc_root;
        pids.iter()
            .filter_map(|&pid| {
                let swappable: Vec<_> = memext_sys::maps::read_maps_in(root, pid)
                    .ok()?
                    .into_iter()
                    .filter(|m| m.is_swappable())
                    .collect();
                let ranges = Pagemap::open_in(root, pid, ScanBackend::Ioctl)
                    .and_then(|mut pm| pm.scan_mappings(&swappable))
                    .ok()?;
                let resident = ranges
                    .iter()
                    .filter(|r| r.state == PageState::Resident)
                    .map(|r| (r.range.start, r.range.end))
                    .collect();
                Some((pid, resident))
            })
            .collect()
    }

    fn host_facts(&mut self, cfg: &Config) -> anyhow::Result<HostFacts> {
        let swaps = self
            .host
            .read_proc("swaps")
            .ok()
            .and_then(|t| memext_sys::swap::parse_swaps(&t).ok())
            .unwrap_or_default();
        Ok(HostFacts {
            capacity: capacity(&self.host, cfg)?,
            next_swap_is_zram: crate::tiers::next_area_is_zram(&swaps),
            // v1 has no memory.min: a critical context's room is what the
            // extend contexts' limits leave it (unless told not to keep it).
            limits_protect: self.host.hierarchy.version == Version::V1 && cfg.daemon.limit_room,
            background_reclaim: cfg.daemon.reclaim.in_background(),
            charge_room: match self.host.hierarchy.version {
                Version::V1 => super::act::V1_CHARGE_ROOM,
                Version::V2 => 0,
            },
        })
    }

    fn watch(&mut self, watched: &[Watched<'_>], deadline: Instant) -> Vec<Seen> {
        let clock = &self.host.clock;
        clock.sleep(self.poll.min(deadline.saturating_sub(clock.now())));
        watched
            .iter()
            .filter_map(|w| read_cpu(w, clock.as_ref()).map(Seen::Cpu))
            .collect()
    }
}

/// One CPU reading of a watched context (None when its cgroup vanished: it
/// is dropped at the next tick).
pub(crate) fn read_cpu(w: &Watched<'_>, clock: &dyn Clock) -> Option<CpuReading> {
    let cpu = w.cg.cpu_usage().ok()?.unwrap_or_default();
    Some(CpuReading {
        id: w.id.clone(),
        at: clock.now(),
        cpu,
    })
}

/// The cgroup whose limit is the capacity (`daemon.capacity_cgroup`), if
/// one is configured.
pub fn capacity_cgroup(host: &Host, cfg: &Config) -> anyhow::Result<Option<AnyCgroup>> {
    let Some(p) = &cfg.daemon.capacity_cgroup else {
        return Ok(None);
    };
    let path = CgroupPath::parse(p)?;
    let cg = host
        .hierarchy
        .open(&path)
        .with_context(|| format!("daemon.capacity_cgroup {p}"))?;
    Ok(Some(cg))
}

/// DRAM the selected contexts may use together: the configured size, else
/// the limit of the configured cgroup, else the host's DRAM less the reserve.
pub fn capacity(host: &Host, cfg: &Config) -> anyhow::Result<u64> {
    let d = &cfg.daemon;
    if let Some(c) = d.capacity {
        return Ok(c.0);
    }
    if let Some(cg) = capacity_cgroup(host, cfg)? {
        let knob = match cg.version() {
            Version::V1 => LimitKnob::V1Limit,
            Version::V2 => LimitKnob::Max,
        };
        if let Limit::Bytes(b) = cg.read_limit(knob)? {
            return Ok(b);
        }
    }
    let total = parse_mem_total(&host.read_proc("meminfo")?).context("no MemTotal in meminfo")?;
    Ok(total.saturating_sub(d.reserve.0))
}

/// Pure: MemTotal of a /proc/meminfo text, in bytes.
fn parse_mem_total(meminfo: &str) -> Option<u64> {
    let kib: u64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())?;
    Some(kib * 1024)
}

#[cfg(test)]
#[path = "observe_tests.rs"]
mod tests;
