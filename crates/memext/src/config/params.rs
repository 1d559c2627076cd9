//! The policy's parameters: host, runtimes' metadata, the daemon; their
//! defaults and checks (a class's in `class.rs`, the pmem broker's in
//! `pmem.rs`).

use std::path::PathBuf;
use std::time::Duration;

use memext_cgroup::CgroupPath;
use serde::Deserialize;

use crate::units::ByteSize;

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
    /// Or: the memory limit of this cgroup (e.g. a parent of all contexts);
    /// the metrics then count the charges that met that limit.
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
    /// Which of the reclaimer's lowerings that no wake waits for wait (at
    /// most 300 ms a job) while a woken context is read back
    /// (`daemon/wake_gate.rs`): `true` every one, `false` none; unset (the
    /// default) those of contexts pushed out only when their room is
    /// needed (`push_out = "when-needed"`), whose wakes read into the room
    /// kept free for them (`keep_free`). Alone, in bench/faas, it made cold
    /// calls cheaper and the p50 lower in four of four A/B pairs, but the
    /// predicted timer calls slower in all four and the p99 higher in two
    /// (session 37: the room made later); with 96 MiB kept free, the p99
    /// was lower in six of six pairs, and from 10 s into the trace on in
    /// seven of eight with the landed default's two (session 53).
    #[serde(default)]
    pub yield_to_wakes: Option<bool>,
    /// DRAM that contexts resting between calls leave free on a host meant
    /// to be full, for the next wake to read into before the others'
    /// limits come down (at most half the capacity). Unset: room for the
    /// largest such context (all it holds and has out), at least 1/32 of
    /// the capacity (and 32 MiB), at most 1/16 of it.
    #[serde(default)]
    pub keep_free: Option<ByteSize>,
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
    /// The nice value the mover reads a woken context back at (0-19;
    /// default 0, the daemon's own priority; its other moves run at 19).
    /// At 19 it reads on a CPU no task of the contexts wants; where they
    /// fill the CPUs, the wake's own faults do the reading. (bench/faas,
    /// session 63: warm calls that overlapped a wake's read-back were
    /// served within 8 ms in 23-45% of cases, against 81-95% beside a
    /// predicted one at nice 19; at 19 they were no better, 30-45%; in
    /// three rotated pairs the p99 146-196 ms against 188-230, the p50
    /// 43-45 against 38-42 and the timers' slower: a setting.)
    #[serde(default)]
    pub wake_read_back_nice: Nice,
    /// How the daemon's moves compete for the CPU: "nice" (the default:
    /// push-outs, predicted read-backs and lowerings at nice 19, a woken
    /// context's read-back at `wake_read_back_nice`, a lowering a wake waits
    /// for at 0) or "idle" (all of them SCHED_IDLE: on CPU time no task
    /// wants; a task that wakes takes the CPU from them at once).
    #[serde(default)]
    pub move_priority: MovePriority,
    /// On a v1 cpu hierarchy, the background moves (those at nice 19, or
    /// SCHED_IDLE) run in a cpu cgroup of their own, `memext-moves`, beside
    /// the contexts' cgroups at the weight their priority means, while a
    /// critical context runs (`true`; where none runs they run at home, the
    /// host's own work). A thread's nice value weighs only against the
    /// threads of its own group: the daemon's cpu cgroup, or its session's
    /// autogroup, which the kernel weighs against each container's cgroup
    /// as a nice-0 task's (37-50% of a CPU against a context's spinning
    /// task at "nice 19", 1.6% in the group: `memext-e2e` `move_group_v1`).
    /// Off by default. bench/peers, the critical workload's throughput
    /// on against off, four rounds a cell (session 76, medians): Redis
    /// 1.03x (fetch), 1.24x (burst), 1.21x (grow), PostgreSQL 0.98x
    /// (fetch), 1.07x (burst, higher in all four and in session 75's two)
    /// and 0.84x (grow, lower in three of four, its p99 higher in all
    /// four); the noise's wakes and jobs slower in the burst and grow
    /// cells. In bench/faas, which has no critical context, the group all
    /// the time raised the p99 in three rounds of three (session 75):
    /// hence only while a critical context runs.
    #[serde(default)]
    pub move_group: bool,
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
    /// An analysis setting, not for production: a JSON file of cgroup
    /// paths to the epoch seconds of every call each context will get
    /// (bench/faas writes it from its trace), which stand for the engine's
    /// prediction of those contexts (`daemon/foretold.rs`): the engine
    /// with perfect foresight. Read again when it changes. Unset: none.
    #[serde(default)]
    pub foretold_calls: Option<PathBuf>,
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
            move_group: false,
            yield_to_wakes: None,
            keep_free: None,
            touches: false,
            wake_read_back_nice: Nice::default(),
            move_priority: MovePriority::default(),
            idle_read: default_idle_read(),
            ws_interval: default_ws_interval(),
            prefetch_lead: default_lead(),
            accuracy_window: default_accuracy_window(),
            socket: default_socket(),
            foretold_calls: None,
        }
    }
}

/// A thread's nice value as the policy file gives it: 0 (the default
/// priority) to 19 (the lowest).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(try_from = "u64")]
pub struct Nice(pub i32);

impl TryFrom<u64> for Nice {
    type Error = String;
    fn try_from(v: u64) -> Result<Self, String> {
        match i32::try_from(v) {
            Ok(n @ 0..=19) => Ok(Nice(n)),
            _ => Err(format!(
                "nice {v} is out of range: 0 (the default priority) to 19 (the lowest)"
            )),
        }
    }
}

/// How the daemon's moves compete for the CPU (`daemon.move_priority`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MovePriority {
    /// At nice values (`daemon::priority::MovePriorities`).
    #[default]
    Nice,
    /// SCHED_IDLE, every move.
    Idle,
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
    if let Some(f) = d.foretold_calls.as_ref().filter(|f| !f.is_absolute()) {
        return Some(format!(
            "daemon.foretold_calls {} must be absolute",
            f.display()
        ));
    }
    None
}
