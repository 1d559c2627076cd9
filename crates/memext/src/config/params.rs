//! The policy's parameters: per class, host, runtimes' metadata, the daemon,
//! the pmem broker; their defaults and checks.

use std::path::PathBuf;
use std::time::Duration;

use memext_cgroup::CgroupPath;
pub use memext_engine::context::PushOutWhen;
use serde::Deserialize;

use crate::units::{ByteSize, Percent};

/// A duration written as `30s`, `5m`, `1h 30m`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct HumanDuration(pub Duration);

impl TryFrom<String> for HumanDuration {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        humantime::parse_duration(&s)
            .map(HumanDuration)
            .map_err(|e| format!("{s:?} is not a duration (like 30s or 5m): {e}"))
    }
}

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
    /// growing one are then done on the CPU the critical ones leave.
    pub cpu_weight: Option<CpuWeight>,
    /// The CPU weight an admitted waking context runs at until it settles
    /// (never below `cpu_weight`; default 100, the kernel's default): the
    /// trade between serving a wake sooner and leaving the critical contexts
    /// their CPU. Lower it where the critical workload alone fills the CPUs.
    pub wake_cpu_weight: CpuWeight,
    /// The CPUs the class's contexts may use together while a critical
    /// context runs (extend only; default none): each running one gets its
    /// share as a CPU quota (v1 `cpu.cfs_quota_us`, v2 `cpu.max`), restored
    /// when the daemon stops. Where the critical workload fills the CPUs, a
    /// CPU weight does not bound what the noise's swap-ins and reclaim take
    /// from it; a quota does, at the cost of slower wakes (README,
    /// bench/peers, session 32).
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
    /// as a wake until it settles. Measured (README, bench/peers): the noise's
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
    /// Measured (README, bench/peers, issue 15's scenario): PostgreSQL took
    /// 0-2 major faults a window with it, 95-1,759 without.
    pub keep_anon: bool,
    /// While a critical context runs, at most this many of the class's
    /// contexts are served a wake at once (extend only; default none: as
    /// many as fit): a queued wake waits frozen, up to `admit_within`,
    /// until one that runs rests. On a machine the critical workload fills,
    /// wakes served together fault and reclaim each other's pages, taking
    /// CPU and TLB shootdowns from it (README, bench/peers, session 33).
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

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    #[serde(default = "default_cgroup_root")]
    pub cgroup_root: PathBuf,
    #[serde(default = "default_state_dir")]
    pub state_dir: PathBuf,
    /// Where the proc file system is (a container sees the host's elsewhere).
    #[serde(default = "default_proc_root")]
    pub proc_root: PathBuf,
    /// Top-level cgroups that belong to the machine's own machinery: never
    /// considered, not even read.
    #[serde(default = "default_leave_alone")]
    pub leave_alone: Vec<String>,
}

pub(crate) fn default_cgroup_root() -> PathBuf {
    PathBuf::from(memext_cgroup::Hierarchy::DEFAULT_ROOT)
}
pub(crate) fn default_state_dir() -> PathBuf {
    PathBuf::from("/var/lib/memext")
}
pub(crate) fn default_proc_root() -> PathBuf {
    PathBuf::from("/proc")
}
/// The development machines' own service cgroup (see MACHINE.md): memext
/// must never write to or read below it.
pub(crate) fn default_leave_alone() -> Vec<String> {
    vec!["process_api".to_owned()]
}

impl Default for HostConfig {
    fn default() -> Self {
        Self {
            cgroup_root: default_cgroup_root(),
            state_dir: default_state_dir(),
            proc_root: default_proc_root(),
            leave_alone: default_leave_alone(),
        }
    }
}

/// Where container runtimes keep the metadata memext reads names from.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuntimePaths {
    #[serde(default = "default_docker_roots")]
    pub docker_roots: Vec<PathBuf>,
    #[serde(default = "default_podman_roots")]
    pub podman_roots: Vec<PathBuf>,
    /// containerd's state directories, where its CRI plugin's OCI bundles
    /// (with the pods' annotations) are.
    #[serde(default = "default_containerd_roots")]
    pub containerd_roots: Vec<PathBuf>,
    /// Whether Kubernetes pods' `memext.io/*` annotations count (class and
    /// parameters, over the selectors and class tables). Whoever may create
    /// pods may then declare one critical: turn this off, or restrict the
    /// annotation by admission policy, where that is not wanted.
    #[serde(default = "default_true")]
    pub pod_annotations: bool,
}

pub(crate) fn default_containerd_roots() -> Vec<PathBuf> {
    vec![PathBuf::from("/run/containerd")]
}
fn default_true() -> bool {
    true
}

pub(crate) fn default_docker_roots() -> Vec<PathBuf> {
    vec![PathBuf::from("/var/lib/docker")]
}
pub(crate) fn default_podman_roots() -> Vec<PathBuf> {
    vec![PathBuf::from("/var/lib/containers/storage")]
}

impl Default for RuntimePaths {
    fn default() -> Self {
        Self {
            docker_roots: default_docker_roots(),
            podman_roots: default_podman_roots(),
            containerd_roots: default_containerd_roots(),
            pod_annotations: true,
        }
    }
}

/// The daemon's own settings.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DaemonConfig {
    /// DRAM the selected contexts may use together, as a size.
    pub capacity: Option<ByteSize>,
    /// Or: the memory limit of this cgroup (e.g. a parent of all contexts).
    pub capacity_cgroup: Option<String>,
    /// Or (the default): the host's DRAM less this reserve.
    #[serde(default = "default_reserve")]
    pub reserve: ByteSize,
    /// Full observe → plan → act cycle.
    #[serde(default = "default_tick")]
    pub tick: HumanDuration,
    /// How often idle contexts' CPU counters are polled to catch a wake
    /// (those without a kernel wake event, or all with `observer = "polling"`).
    #[serde(default = "default_poll")]
    pub poll: HumanDuration,
    /// How wakes and new contexts are noticed: `events` (kernel wake events
    /// and inotify; polling only where no event exists) or `polling` (every
    /// idle context read every `poll`, the tree walked every tick).
    #[serde(default)]
    pub observer: ObserverKind,
    /// Where a limit written below a context's usage is written, the kernel
    /// reclaiming the difference in the writing thread: `background` (a
    /// thread of its own at nice 19, in steps, its room counted once done),
    /// `page-out` (the same, the memory first paged out with
    /// `process_madvise`: a fraction of the CPU, no TLB shootdowns) or
    /// `loop` (the previous design: in the daemon's loop, at once).
    #[serde(default)]
    pub reclaim: ReclaimIn,
    /// cgroup v1 (no `memory.min`): the extend contexts' limits never sum
    /// past the room the critical contexts leave (`true`, the default), so
    /// a wake's raise waits for the others' lowerings. `false`: a raise is
    /// written as planned, and while the limits sum past the room the
    /// parent's cap reclaims, in the kernel's order, from every context,
    /// the critical ones included (bench/peers' `oracle` bound runs so).
    #[serde(default = "default_limit_room")]
    pub limit_room: bool,
    /// The reclaimer's lowerings that no wake waits for wait (at most 300
    /// ms a job) while a woken context is read back (`daemon/wake_gate.rs`).
    /// Off by default: in bench/faas it made cold calls cheaper and the p50
    /// lower in four of four A/B pairs, but the predicted timer calls slower
    /// in all four and the p99 in two (the room made later).
    #[serde(default)]
    pub yield_to_wakes: bool,
    /// A resting context with its pages in is taken for called only if
    /// its processes touched a share of their memory, not on CPU alone
    /// (`memext_engine::touch`). Off by default: the asks clear the
    /// accessed bits of what they read, and the kernel's reclaim at a
    /// parent's cap (cgroup v1) then takes the pages of recently called
    /// contexts as if unused (bench/faas, session 42: calls that faulted
    /// with nothing taken by memext 28-38 a run against 9-20).
    #[serde(default)]
    pub touches: bool,
    /// With kernel wake events: an idle context guarded by one is read at a
    /// tick only this often.
    #[serde(default = "default_idle_read")]
    pub idle_read: HumanDuration,
    /// How often an active context's working set is snapshotted.
    #[serde(default = "default_ws_interval")]
    pub ws_interval: HumanDuration,
    /// Bring a periodic context back this long before its predicted wake.
    #[serde(default = "default_lead")]
    pub prefetch_lead: HumanDuration,
    /// Prefetch accuracy: pages brought back and touched within this long.
    #[serde(default = "default_accuracy_window")]
    pub accuracy_window: HumanDuration,
    /// The control socket `memext status` talks to.
    #[serde(default = "default_socket")]
    pub socket: PathBuf,
}

pub(crate) fn default_reserve() -> ByteSize {
    ByteSize(2 << 30)
}
pub(crate) fn default_tick() -> HumanDuration {
    HumanDuration(Duration::from_secs(1))
}
pub(crate) fn default_poll() -> HumanDuration {
    HumanDuration(Duration::from_millis(20))
}
pub(crate) fn default_limit_room() -> bool {
    true
}
pub(crate) fn default_idle_read() -> HumanDuration {
    HumanDuration(Duration::from_secs(60))
}
pub(crate) fn default_ws_interval() -> HumanDuration {
    HumanDuration(Duration::from_secs(10))
}
pub(crate) fn default_lead() -> HumanDuration {
    HumanDuration(Duration::from_secs(3))
}
pub(crate) fn default_accuracy_window() -> HumanDuration {
    HumanDuration(Duration::from_secs(10))
}
pub(crate) fn default_socket() -> PathBuf {
    PathBuf::from("/run/memext.sock")
}

impl Default for DaemonConfig {
    fn default() -> Self {
        Self {
            capacity: None,
            capacity_cgroup: None,
            reserve: default_reserve(),
            tick: default_tick(),
            poll: default_poll(),
            observer: ObserverKind::default(),
            reclaim: ReclaimIn::default(),
            limit_room: default_limit_room(),
            yield_to_wakes: false,
            touches: false,
            idle_read: default_idle_read(),
            ws_interval: default_ws_interval(),
            prefetch_lead: default_lead(),
            accuracy_window: default_accuracy_window(),
            socket: default_socket(),
        }
    }
}

/// How the daemon notices wakes and new contexts (`daemon.observer`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ObserverKind {
    #[default]
    Events,
    Polling,
}

/// Where limits below the usage are written (`daemon.reclaim`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReclaimIn {
    #[default]
    Background,
    /// In the background, the context's memory paged out with
    /// `process_madvise` before the limit steps down.
    #[serde(rename = "page-out")]
    PageOut,
    Loop,
}

impl ReclaimIn {
    /// Whether the reclaimer thread lowers limits (else the daemon's loop).
    pub fn in_background(self) -> bool {
        self != ReclaimIn::Loop
    }
}

/// What a container's persistent regions are filed under.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub enum RegionKey {
    /// The container id: a new container starts with no regions.
    Id,
    /// The container's name: a re-created container of the same name gets its regions back.
    Name,
    /// The value of this container label.
    Label(String),
}

impl TryFrom<String> for RegionKey {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        match s.as_str() {
            "id" => Ok(RegionKey::Id),
            "name" => Ok(RegionKey::Name),
            _ => match s.strip_prefix("label:") {
                Some(l) if !l.is_empty() => Ok(RegionKey::Label(l.to_owned())),
                _ => Err(format!(
                    "pmem.key must be \"id\", \"name\" or \"label:KEY\", not {s:?}"
                )),
            },
        }
    }
}

/// The pmem broker (`memext pmem-broker`, or inside the daemon).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PmemConfig {
    /// Also run the broker inside `memext daemon`.
    #[serde(default)]
    pub in_daemon: bool,
    /// Directory holding one sub-directory of region files per container.
    #[serde(default = "default_pmem_root")]
    pub root: PathBuf,
    /// The broker's socket. Mount its *directory* into containers, so a restarted
    /// broker's new socket is seen there.
    #[serde(default = "default_pmem_socket")]
    pub socket: PathBuf,
    #[serde(default = "default_region_key")]
    pub key: RegionKey,
    /// Most bytes of regions one container may hold.
    #[serde(default = "default_container_quota")]
    pub container_quota: ByteSize,
    /// Most bytes of regions all containers together may hold.
    #[serde(default = "default_total_quota")]
    pub total_quota: ByteSize,
    /// Serve callers that are not in a container (refused by default).
    #[serde(default)]
    pub allow_host: bool,
}

pub(crate) fn default_pmem_root() -> PathBuf {
    PathBuf::from("/var/lib/memext/pmem")
}
pub(crate) fn default_pmem_socket() -> PathBuf {
    PathBuf::from(scm::protocol::DEFAULT_SOCKET)
}
pub(crate) fn default_region_key() -> RegionKey {
    RegionKey::Id
}
pub(crate) fn default_container_quota() -> ByteSize {
    ByteSize(4 << 30)
}
pub(crate) fn default_total_quota() -> ByteSize {
    ByteSize(64 << 30)
}

impl Default for PmemConfig {
    fn default() -> Self {
        Self {
            in_daemon: false,
            root: default_pmem_root(),
            socket: default_pmem_socket(),
            key: default_region_key(),
            container_quota: default_container_quota(),
            total_quota: default_total_quota(),
            allow_host: false,
        }
    }
}

pub(crate) fn validate_pmem(p: &PmemConfig) -> Option<String> {
    if !p.root.is_absolute() || !p.socket.is_absolute() {
        return Some("pmem.root and pmem.socket must be absolute paths".into());
    }
    if p.socket.starts_with(&p.root) {
        return Some("pmem.socket must not lie under pmem.root".into());
    }
    if p.container_quota.0 == 0 || p.container_quota.0 > p.total_quota.0 {
        return Some(
            "pmem.container_quota must be more than 0 and at most pmem.total_quota".into(),
        );
    }
    None
}

pub(crate) fn validate_host(h: &HostConfig) -> Option<String> {
    if let Some(bad) = h
        .leave_alone
        .iter()
        .find(|n| n.is_empty() || n.contains('/') || *n == "." || *n == "..")
    {
        return Some(format!(
            "host.leave_alone: {bad:?} is not the name of a top-level cgroup"
        ));
    }
    if !h.proc_root.is_absolute() {
        return Some(format!(
            "host.proc_root {} must be absolute",
            h.proc_root.display()
        ));
    }
    None
}

pub(crate) fn validate_daemon(d: &DaemonConfig) -> Option<String> {
    if d.capacity.is_some() && d.capacity_cgroup.is_some() {
        return Some("daemon: give capacity or capacity_cgroup, not both".into());
    }
    if let Some(c) = &d.capacity_cgroup {
        if let Err(e) = CgroupPath::parse(c) {
            return Some(format!("daemon.capacity_cgroup: {e}"));
        }
    }
    if d.poll.0.is_zero() || d.tick.0 < d.poll.0 {
        return Some("daemon: poll must be more than 0 and no longer than tick".into());
    }
    if d.idle_read.0 < d.tick.0 {
        return Some("daemon: idle_read must be at least tick".into());
    }
    if !d.socket.is_absolute() {
        return Some(format!(
            "daemon.socket {} must be absolute",
            d.socket.display()
        ));
    }
    None
}
