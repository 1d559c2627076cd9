//! A class's parameters (critical, extend): as the file gives them, and
//! resolved against the defaults.

use std::time::Duration;

use serde::Deserialize;

use super::HumanDuration;
use crate::units::{ByteSize, Percent};
pub use memext_engine::context::PushOutWhen;

/// A relative CPU weight as cgroup v2 spells it: 1-10000, 100 the kernel's
/// default (v1's `cpu.shares` scale it by 1024/100).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(try_from = "u64")]
pub struct CpuWeight(pub u16);

impl TryFrom<u64> for CpuWeight {
    type Error = String;
    fn try_from(v: u64) -> Result<Self, String> {
        match u16::try_from(v) {
            Ok(w @ 1..=10000) => Ok(CpuWeight(w)),
            _ => Err(format!(
                "cpu_weight {v} is out of range: 1 to 10000 (100 is the kernel's default)"
            )),
        }
    }
}

/// CPUs as a fraction, as `cpu_max` is written (`0.3`: 30% of one CPU),
/// kept in thousandths: 0.01 to 1024.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(try_from = "f64")]
pub struct Cpus(pub u32);

impl TryFrom<f64> for Cpus {
    type Error = String;
    fn try_from(v: f64) -> Result<Self, String> {
        if (0.01..=1024.0).contains(&v) {
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            // 10 to 1,024,000: positive, and it fits a u32.
            Ok(Cpus((v * 1000.0).round() as u32))
        } else {
            Err(format!(
                "cpu_max {v} is out of range: 0.01 to 1024 CPUs (0.5 is half of one CPU)"
            ))
        }
    }
}

/// How many of a class's contexts are served a wake at once while a
/// critical context runs (`wakes_at_once`): 1 to 1024.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(try_from = "u64")]
pub struct WakesAtOnce(pub u32);

impl TryFrom<u64> for WakesAtOnce {
    type Error = String;
    fn try_from(v: u64) -> Result<Self, String> {
        match u32::try_from(v) {
            Ok(n @ 1..=1024) => Ok(WakesAtOnce(n)),
            _ => Err(format!(
                "wakes_at_once {v} is out of range: 1 to 1024 (1: one wake at a time)"
            )),
        }
    }
}

/// Parameters of a class, as the file gives them (all optional).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ClassOverrides {
    pub(crate) idle_after: Option<HumanDuration>,
    pub(crate) floor: Option<ByteSize>,
    pub(crate) headroom: Option<Percent>,
    pub(crate) pageout_bandwidth: Option<ByteSize>,
    pub(crate) prefetch_bandwidth: Option<ByteSize>,
    pub(crate) map_back: Option<bool>,
    pub(crate) map_kept: Option<bool>,
    pub(crate) cpu_weight: Option<CpuWeight>,
    pub(crate) wake_cpu_weight: Option<CpuWeight>,
    pub(crate) resident_cpu_weight: Option<CpuWeight>,
    pub(crate) cpu_max: Option<Cpus>,
    pub(crate) admit_within: Option<HumanDuration>,
    pub(crate) push_out: Option<PushOutWhen>,
    pub(crate) fast_wakes: Option<bool>,
    pub(crate) keep_anon: Option<bool>,
    pub(crate) wakes_at_once: Option<WakesAtOnce>,
    pub(crate) cpu_idle: Option<bool>,
    pub(crate) admit_at_peak: Option<bool>,
}

/// Parameters of a class, resolved against the defaults.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ClassParams {
    /// A context with no activity for this long is idle.
    pub idle_after: Duration,
    /// An idle context is never pushed below this many resident bytes.
    pub floor: ByteSize,
    /// Room above the working set kept for a context, in percent of it.
    pub headroom: Percent,
    /// Page-out bandwidth cap, bytes per second.
    pub pageout_bandwidth: ByteSize,
    /// Prefetch (bring-back) bandwidth cap, bytes per second.
    pub prefetch_bandwidth: ByteSize,
    /// Before a predicted periodic wake, also map the brought-back working set
    /// (MADV_COLLAPSE: whole 2 MiB blocks as huge pages), so that the wake
    /// takes no page faults at all. Pages mapped this way no longer tell
    /// whether the context touched them: prefetch accuracy leaves them out.
    pub map_back: bool,
    /// With `map_back`, before a predicted periodic wake also map as huge
    /// pages every 2 MiB block of the context's private anonymous memory
    /// it holds whole (in DRAM or in swap), a resident context's too:
    /// reclaim's scans (a limit lowered, a full parent's cap) clear the
    /// accessed bits of the pages they leave, and the call then set each
    /// one again (0.4 us a page on this host, measured). Off by default.
    pub map_kept: bool,
    /// The CPU weight the class's contexts run at (v2 `cpu.weight`, v1
    /// `cpu.shares` scaled), or None to leave it as the runtime set it. Low
    /// for extend contexts: the page faults and reclaim of a waking or
    /// growing one are then done on the CPU the critical ones leave. An
    /// extend class's weight holds only while a critical context is
    /// tracked; without one its contexts run at least at the kernel's
    /// default (100).
    pub cpu_weight: Option<CpuWeight>,
    /// The CPU weight an admitted waking context runs at until it settles
    /// (never below `cpu_weight`; default 100, the kernel's default): the
    /// trade between serving a wake sooner and leaving the critical contexts
    /// their CPU. Lower it where the critical workload alone fills the CPUs.
    pub wake_cpu_weight: CpuWeight,
    /// The CPU weight a context whose memory is all in DRAM runs at (never
    /// below `cpu_weight`, and only where the class has one; default none:
    /// `cpu_weight`). Its next call takes
    /// no page fault and little CPU; above `wake_cpu_weight` it is served
    /// before the cold calls beside it, which take tens of ms of CPU each
    /// faulting their memory back. For hosts of many short calls (a
    /// serverless host); where a critical workload fills the CPUs it takes
    /// from it what the class's low `cpu_weight` would leave it.
    pub resident_cpu_weight: Option<CpuWeight>,
    /// The CPUs the class's contexts may use together while a critical
    /// context runs (extend only; default none): each running one gets its
    /// share as a CPU quota (v1 `cpu.cfs_quota_us`, v2 `cpu.max`), restored
    /// when the daemon stops. Where the critical workload fills the CPUs, a
    /// CPU weight does not bound what the noise's swap-ins and reclaim take
    /// from it; a quota does, at the cost of slower wakes (bench/peers,
    /// session 32, `docs/peers/HISTORY.md`).
    pub cpu_max: Option<Cpus>,
    /// Admission of waking contexts (extend only): when the working sets of
    /// the contexts that wake together do not fit, they are let in one after
    /// another in the order they woke, each in full, the others frozen (v1
    /// freezer, v2 `cgroup.freeze`) at their floor for at most this long; one
    /// that waited this long runs with a share of what is left. `0s`: every
    /// wake runs at once and they share what there is.
    pub admit_within: Duration,
    /// When an idle context is pushed out: `when-idle` (the default: as soon
    /// as it is idle, down to its floor, keeping DRAM free for more
    /// containers) or `when-needed` (only as far as the capacity needs, the
    /// contexts expected to wake soonest kept longest: work-conserving, for
    /// hosts whose DRAM is meant to be full, like a serverless host's).
    pub push_out: PushOutWhen,
    /// Serve the class's wakes as fast as the machine allows, at the
    /// critical contexts' expense (default false): a context whose pages the
    /// kernel put in swap at memext's limit is read back in bulk when it
    /// wakes (or starts again before it was judged idle), its wake watched
    /// for between ticks at the waking CPU weight, and such a restart served
    /// as a wake until it settles. Measured (bench/peers, `docs/peers/HISTORY.md`): the noise's
    /// wakes 2-3x faster in the postgres x burst scenario, at the
    /// critical throughput's expense in the quick postgres x burst cell.
    pub fast_wakes: bool,
    /// Keep the class's anonymous and shared memory in DRAM when a cap above
    /// it reclaims (critical only; default true): on v1 its
    /// `memory.swappiness` is 0, so the reclaim of a parent's limit takes
    /// only its page cache (the host's own global reclaim still may swap
    /// it); on v2 its `memory.swap.max` is 0 (not over a swap limit someone
    /// else set); on both not under a memory limit of its own, whose reclaim
    /// would then end in the OOM killer.
    /// Measured (bench/peers, issue 15's scenario, `docs/peers/HISTORY.md`): PostgreSQL took
    /// 0-2 major faults a window with it, 95-1,759 without.
    pub keep_anon: bool,
    /// While a critical context runs, at most this many of the class's
    /// contexts are served a wake at once (extend only; default none: as
    /// many as fit): a queued wake waits frozen, up to `admit_within`,
    /// until one that runs rests. On a machine the critical workload fills,
    /// wakes served together fault and reclaim each other's pages, taking
    /// CPU and TLB shootdowns from it (bench/peers, session 33, `docs/peers/HISTORY.md`).
    pub wakes_at_once: Option<WakesAtOnce>,
    /// Run the class's contexts as idle CPU groups (extend only; default
    /// false): v1 and v2 `cpu.idle` 1, restored when the daemon stops. They
    /// then take only CPU no other task wants, and a critical task that
    /// wakes preempts them at once, where a low CPU weight still lets them
    /// run their share first; unlike `cpu_max` it leaves them all the CPU
    /// the critical workload does not use. Their CPU weights (`cpu_weight`,
    /// `wake_cpu_weight`) are not written then: the kernel refuses a weight
    /// for an idle group. Needs kernel 5.15 or later.
    pub cpu_idle: bool,
    /// Admission at the peak (extend only, with `admit_within` above 0s;
    /// default false): a context that starts again after a quiet stretch
    /// (an onset) holding less than half its peak queues as a wake does; a
    /// queued context is let in only when there is room for its peak (the
    /// most it had in its last stretch of activity, charged and in swap);
    /// and the running ones keep room for what they need in the order their
    /// stretches began, those it no longer holds waiting frozen in the
    /// queue. For batch jobs that grow to a peak over time: run in turn as
    /// their peaks fit, instead of all growing past the room together, each
    /// reclaiming its own pages at its share.
    pub admit_at_peak: bool,
}

impl ClassParams {
    /// The engine's form of these parameters.
    pub fn engine(&self) -> memext_engine::context::ClassParams {
        memext_engine::context::ClassParams {
            idle_after: self.idle_after,
            floor: self.floor.0,
            headroom_pct: self.headroom.0,
            pageout_bandwidth: self.pageout_bandwidth.0,
            prefetch_bandwidth: self.prefetch_bandwidth.0,
            map_back: self.map_back,
            map_kept: self.map_kept,
            cpu_weight: self.cpu_weight.map(|w| w.0),
            wake_cpu_weight: self.wake_cpu_weight.0,
            resident_cpu_weight: self.resident_cpu_weight.map(|w| w.0),
            cpu_max_milli: self.cpu_max.map(|c| c.0),
            admit_within: self.admit_within,
            push_out: self.push_out,
            fast_wakes: self.fast_wakes,
            keep_anon: self.keep_anon,
            wakes_at_once: self.wakes_at_once.map(|w| w.0),
            cpu_idle: self.cpu_idle,
            admit_at_peak: self.admit_at_peak,
        }
    }
}

impl ClassOverrides {
    pub(crate) fn resolve(&self, d: ClassParams) -> ClassParams {
        ClassParams {
            idle_after: self.idle_after.map_or(d.idle_after, |h| h.0),
            floor: self.floor.unwrap_or(d.floor),
            headroom: self.headroom.unwrap_or(d.headroom),
            pageout_bandwidth: self.pageout_bandwidth.unwrap_or(d.pageout_bandwidth),
            prefetch_bandwidth: self.prefetch_bandwidth.unwrap_or(d.prefetch_bandwidth),
            map_back: self.map_back.unwrap_or(d.map_back),
            map_kept: self.map_kept.unwrap_or(d.map_kept),
            cpu_weight: self.cpu_weight.or(d.cpu_weight),
            wake_cpu_weight: self.wake_cpu_weight.unwrap_or(d.wake_cpu_weight),
            resident_cpu_weight: self.resident_cpu_weight.or(d.resident_cpu_weight),
            cpu_max: self.cpu_max.or(d.cpu_max),
            admit_within: self.admit_within.map_or(d.admit_within, |h| h.0),
            push_out: self.push_out.unwrap_or(d.push_out),
            fast_wakes: self.fast_wakes.unwrap_or(d.fast_wakes),
            keep_anon: self.keep_anon.unwrap_or(d.keep_anon),
            wakes_at_once: self.wakes_at_once.or(d.wakes_at_once),
            cpu_idle: self.cpu_idle.unwrap_or(d.cpu_idle),
            admit_at_peak: self.admit_at_peak.unwrap_or(d.admit_at_peak),
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ClassTable {
    #[serde(default)]
    pub(crate) critical: ClassOverrides,
    #[serde(default)]
    pub(crate) extend: ClassOverrides,
}
