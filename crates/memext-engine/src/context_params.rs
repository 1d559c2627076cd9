//! The policy for one class of contexts, as the policy file gives it.

use std::time::Duration;

use super::WAKE_CPU_WEIGHT;
use crate::model::ModelParams;

fn wake_cpu_weight_default() -> u16 {
    WAKE_CPU_WEIGHT
}

/// The policy for one class of contexts (from the policy file).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ClassParams {
    /// Without activity for this long, a context is idle.
    pub idle_after: Duration,
    /// DRAM an idle extend context keeps.
    pub floor: u64,
    /// Headroom above the working set, in percent.
    pub headroom_pct: u8,
    /// Page-out bandwidth, bytes per second.
    pub pageout_bandwidth: u64,
    /// Prefetch (bring-back) bandwidth, bytes per second.
    pub prefetch_bandwidth: u64,
    /// Map the working set back (huge pages) before a predicted wake.
    pub map_back: bool,
    /// With `map_back`, also map as huge pages every 2 MiB block the
    /// context holds whole (in DRAM or just read back) before a predicted
    /// periodic wake, a resident one's too: reclaim's scans clear the
    /// accessed bits of the pages they pass and leave, and setting them
    /// again cost the call about 0.4 us a page on this host.
    #[serde(default)]
    pub map_kept: bool,
    /// CPU weight to run the context at (v2 scale, 1-10000), None: as it is.
    #[serde(default)]
    pub cpu_weight: Option<u16>,
    /// CPU weight of an admitted waking context until it settles (never
    /// below `cpu_weight`): how much of the critical contexts' CPU a wake may
    /// take to be served sooner.
    #[serde(default = "wake_cpu_weight_default")]
    pub wake_cpu_weight: u16,
    /// CPU weight of a context whose memory is all in DRAM (never below
    /// `cpu_weight`; None: `cpu_weight`): its next call takes no fault, a
    /// short one, served before the cold calls that run at
    /// `wake_cpu_weight` (see `ContextState::cpu_weight`).
    #[serde(default)]
    pub resident_cpu_weight: Option<u16>,
    /// (Extend only.) The CPU the class's contexts may use together while a critical
    /// context runs, in thousandths of a CPU (None: no cap). See
    /// [`crate::cpu_cap`].
    #[serde(default)]
    pub cpu_max_milli: Option<u32>,
    /// Admission of waking contexts: one whose working set does not fit when
    /// it wakes waits frozen, in wake order, for at most this long (zero:
    /// every wake runs at once and shares what there is).
    #[serde(default)]
    pub admit_within: Duration,
    /// When an idle context is pushed out.
    #[serde(default)]
    pub push_out: PushOutWhen,
    /// Its wakes are served as fast as the machine allows, at the critical
    /// contexts' expense: pages the kernel put in swap at memext's limit are
    /// out too (watched, read back at a wake or an onset), an idle context
    /// that is out runs at the waking CPU weight, and an onset is a wake
    /// until it settles. See `note_paged_out`, `waking`, `cpu_weight`.
    #[serde(default)]
    pub fast_wakes: bool,
    /// A critical context's anonymous and shared memory is kept in DRAM
    /// when a cap above it reclaims (v1 `memory.swappiness` 0, v2
    /// `memory.swap.max` 0; see
    /// [`crate::command::Command::Protect`]).
    #[serde(default)]
    pub keep_anon: bool,
    /// (Extend only.) While a critical context runs, at most this many of
    /// the class's contexts are served a wake at once; the next queued wake
    /// waits frozen until one of them rests (None: as many as fit). See
    /// `planner`'s admission.
    #[serde(default)]
    pub wakes_at_once: Option<u32>,
    /// (Extend only.) The class's contexts run as idle CPU groups (`cpu.idle`
    /// 1: SCHED_IDLE against their siblings): they take only CPU that no
    /// other task wants, and a waking task of a sibling that is not idle
    /// preempts them at once. No CPU weight is written for them then (the
    /// kernel refuses one for an idle group). See `cpu_weight`.
    #[serde(default)]
    pub cpu_idle: bool,
    /// (Extend only; with `admit_within` above zero.) Admission at the
    /// peak: an onset (activity after a quiet stretch, holding less than
    /// half its peak) queues like a wake, and a queued context waits for
    /// room for the most it had in its last stretch of activity
    /// (`crate::peak`), not only for what it holds; running, the class's
    /// contexts keep room for what they need in the order their stretches
    /// began, and those the room no longer holds wait in the queue. For
    /// jobs that grow to their peak over time (batch jobs): run in turn as
    /// their peaks fit, instead of all growing past the room together.
    #[serde(default)]
    pub admit_at_peak: bool,
}

/// When an idle extend context is pushed out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum PushOutWhen {
    /// As soon as it is idle, down to its floor: DRAM is kept free for
    /// whatever comes next (more containers on the host).
    #[default]
    #[serde(rename = "when-idle")]
    Idle,
    /// Only as far as the capacity needs: idle contexts keep what they hold
    /// while it fits, the ones expected to wake soonest first
    /// (work-conserving: DRAM is not left free while a pushed-out context
    /// waits for it).
    #[serde(rename = "when-needed")]
    Needed,
}

impl ClassParams {
    pub fn model(&self) -> ModelParams {
        ModelParams {
            idle_after: self.idle_after,
            ..Default::default()
        }
    }
}
