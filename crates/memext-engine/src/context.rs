//! What the engine holds for one memory context between ticks, and the typed
//! sample the daemon's observer takes of it. Owns no I/O: samples come in,
//! the state is updated by the engine's decisions and by what the actuator
//! reports it did.

use std::time::Duration;

use crate::growth::Growth;
use crate::model::{ContextModel, State};
use crate::peak::Peak;
use crate::predict::PrefetchReason;
use crate::refault::Refaults;
use crate::workingset::WorkingSet;
use crate::{Class, ContextId, Instant};

#[path = "context_params.rs"]
mod params;
pub use params::{ClassParams, PushOutWhen};

#[path = "context_applied.rs"]
mod applied;
#[path = "context_own.rs"]
mod own;
#[path = "context_paged.rs"]
mod paged;
pub use applied::{Applied, REASSERT};

/// The CPU weight (v2 scale) an admitted waking extend context runs at until
/// it settles, by default the kernel's default: admission bounds how many run
/// so, and a wake at its class's low weight waited for the critical contexts'
/// CPU (a 53 MiB re-touch took 20 s behind a busy PostgreSQL in bench/peers).
pub const WAKE_CPU_WEIGHT: u16 = 100;

/// An extend context with at least this much in swap is out, whoever put it
/// there (memext's mover, or the kernel at the limit memext wrote).
pub const OUT_SWAPPED_BYTES: u64 = 8 << 20;

/// On a host meant to be full, a call has ended once its context has shown
/// no activity for this long (a tick without any): see `call_ended`.
pub const CALL_ENDED: Duration = Duration::from_secs(1);

/// The cgroup's memory counters at one instant.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MemorySample {
    /// Bytes charged to the context (including its page cache).
    pub usage: u64,
    /// Anonymous memory plus page cache resident in DRAM.
    pub resident: u64,
    /// Bytes in swap (including zswap).
    pub swapped: u64,
    pub pgfault: u64,
    pub pgmajfault: u64,
    /// Anonymous bytes that cannot leave DRAM: beyond what the context's own
    /// swap limit (Kubernetes' LimitedSwap writes one per container) has
    /// room for. The context is never planned below this.
    #[serde(default)]
    pub unswappable: u64,
}

/// One observation of a context, as the observer reads it.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Sample {
    pub at: Instant,
    /// Every process in the context (its sub-cgroups included).
    pub pids: Vec<u32>,
    pub memory: MemorySample,
    /// CPU time used since the cgroup was made (None: no CPU accounting).
    pub cpu: Option<Duration>,
    /// PSI memory "some" avg10, percent (None: no PSI for this cgroup).
    pub psi_some_avg10: Option<f64>,
}

/// How long after it is first tracked a context is not run in turn
/// (`ContextState::runs_in_turn`).
pub const START_GRACE: Duration = Duration::from_secs(5);

/// Everything the engine knows about one context.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ContextState {
    pub id: ContextId,
    pub class: Class,
    pub params: ClassParams,
    pub model: ContextModel,
    pub ws: WorkingSet,
    /// When its working set was last recorded.
    pub last_ws: Option<Instant>,
    /// The last tick's memory reading (zero before the first).
    pub memory: MemorySample,
    pub pids: Vec<u32>,
    /// PSI or major faults seen at the last tick.
    pub under_pressure: bool,
    /// memext pushed it out and has not brought it back since.
    pub out: bool,
    /// Active, memext paged some of it out for room others needed and has
    /// not brought it back since: its next onset or predicted call brings
    /// it back.
    #[serde(default)]
    pub squeezed: bool,
    /// Brought back for a predicted wake: held in (sized for its working set,
    /// not pushed out again) until the instant given, or its wake.
    pub held: Option<(Instant, PrefetchReason)>,
    /// Read back by a refill (for no wake in particular: its pages in the
    /// swap cache, none mapped) since its last wake: each page is a minor
    /// fault to its next call unless a predicted bring-back maps them
    /// first (bench/faas, session 56: a refilled timer function's call took
    /// a median 15.8 ms, 8,695 minor faults, against 4.1 ms when the
    /// periodic bring-back had mapped its pages; 70 of 564 timer calls from
    /// the fourth on).
    #[serde(default)]
    pub unmapped: bool,
    /// Faults the kernel counted to the context while memext itself was
    /// moving its pages (MADV_COLLAPSE reads swapped pages in as the context's
    /// faults): (minor, major), left out of what the model sees, so that
    /// memext's own bring-back is never taken for a wake.
    pub faults_by_memext: (u64, u64),
    /// Faults memext caused in the context's processes that its readings
    /// have not shown yet, (all, major) as its cgroup counts them: its
    /// mover's reads of their pages from outside (`memext_sys::populate`),
    /// which the kernel counts to the context's cgroup as its own. Each
    /// reading leaves out as many of its faults as are pending
    /// (`take_faults_by_memext`): the mover's moving flag alone does not
    /// cover them where the context is read seconds apart (bench/faas,
    /// session 68: 113 map-backs' 120-1,968 such faults read within 1.5 s
    /// as an onset or a wake, a median 2.3 s before the predicted call).
    #[serde(default)]
    pub faults_pending_by_memext: (u64, u64),
    /// CPU time the context spent refaulting what memext took from it
    /// (`refault`), left out of what the model sees, as `faults_by_memext`.
    #[serde(default)]
    pub cpu_by_memext: Duration,
    /// Its CPU time at the last reading (tick or poll), as the kernel counts it.
    #[serde(default)]
    pub cpu_seen: Option<Duration>,
    /// The window after memext last took memory from it, and its budget.
    #[serde(skip)]
    pub refaults: Refaults,
    /// How fast it grows between two readings: its margin in the plan.
    #[serde(skip)]
    pub growth: Growth,
    /// How fast it grows between two readings while it rests: its slack in
    /// the plan.
    #[serde(skip)]
    pub rest_growth: Growth,
    /// The most it had in a stretch of activity: what admission at the
    /// peak waits for.
    #[serde(default)]
    pub peak: Peak,
    /// When this daemon run began tracking it (0 for a context resumed
    /// from a saved state: its clock was another run's).
    #[serde(skip)]
    pub tracked_at: Instant,
    /// The mover had a job for it at the last tick.
    pub was_moving: bool,
    /// Its DRAM target from the last plan.
    pub target: u64,
    /// Of the pages last brought back, the share touched within the window.
    pub accuracy: Option<f64>,
    /// Woke, and not admitted yet: since when it waits for room.
    #[serde(default)]
    pub waiting_since: Option<Instant>,
    /// memext froze it (the actuator said so) and has not thawed it since.
    #[serde(default)]
    pub frozen: bool,
    /// The knob values last carried out (or tried) for it, and when: not
    /// saved (a restarted daemon writes, and checks, each once).
    #[serde(skip)]
    pub applied: Applied,
    /// The memory limit memext last wrote to it (carried out): what bounds
    /// it now. Not saved: a restarted daemon writes each again.
    #[serde(skip)]
    pub limit: Option<u64>,
    /// A lowering below its usage handed to the background (`Reclaim`),
    /// not reported done yet: its limit is on its way down to this; until
    /// then `limit` still bounds it.
    #[serde(skip)]
    pub reclaiming: Option<u64>,
    /// Brought back since its last sample (or sampled while its pages
    /// moved): what it was seen to charge is what it held before. Until a
    /// sample after the read-back it is planned with all it has.
    #[serde(skip)]
    pub reading_back: bool,
}

impl ContextState {
    pub fn new(id: ContextId, class: Class, params: ClassParams, now: Instant) -> Self {
        Self {
            id,
            class,
            params,
            model: ContextModel::new(now),
            ws: WorkingSet::default(),
            last_ws: None,
            memory: MemorySample::default(),
            pids: Vec::new(),
            under_pressure: false,
            out: false,
            squeezed: false,
            held: None,
            unmapped: false,
            faults_by_memext: (0, 0),
            faults_pending_by_memext: (0, 0),
            cpu_by_memext: Duration::ZERO,
            cpu_seen: None,
            refaults: Refaults::default(),
            growth: Growth::default(),
            rest_growth: Growth::default(),
            // Its first stretch begins when memext first sees it: behind
            // the contexts already running in turn.
            peak: Peak::begun(now),
            tracked_at: now,
            was_moving: false,
            target: 0,
            accuracy: None,
            waiting_since: None,
            frozen: false,
            applied: Applied::default(),
            limit: None,
            reclaiming: None,
            reading_back: false,
        }
    }

    /// What it charges, as far as memext knows: its last sample's usage,
    /// and what it had in swap too while a read-back brings that in.
    pub fn charged(&self) -> u64 {
        if self.reading_back {
            self.has()
        } else {
            self.memory.usage
        }
    }

    /// The memory limit in force: what memext last wrote, its usage before
    /// memext wrote one.
    pub fn limit_in_force(&self) -> u64 {
        self.limit.unwrap_or(self.memory.usage)
    }

    /// Active, but no activity seen for a while: between two calls.
    pub fn is_quiet(&self, now: Instant) -> bool {
        self.model.state == State::Active && self.model.is_quiet(now)
    }

    /// Not using its memory now: idle, or active and quiet. What it holds
    /// may go in any order; an active context's coldest pages go first.
    pub fn rests(&self, now: Instant) -> bool {
        self.model.state == State::Idle || self.is_quiet(now)
    }

    /// Pushed out only when the room is needed (`when-needed`): a host
    /// whose DRAM is meant to be full.
    pub fn fills_room(&self) -> bool {
        self.params.push_out == PushOutWhen::Needed
    }

    /// On a host meant to be full, its call is over: woken or active, its
    /// read-back done, no activity for `CALL_ENDED`. The plan lets it rest
    /// (weighed by the keep order with the others) instead of keeping what
    /// it has ahead of them until it settles and goes quiet, 2-3 s after
    /// its call. (Replayed on bench/faas' trace, holding each woken
    /// function 2.6 s cost 6-16 warm calls of the 535 against 1 s:
    /// `docs/faas/s39-2026-11-28/enghist.py`; measured, 5-8 more warm
    /// calls in three A/B pairs, `ab2/`.)
    pub fn call_ended(&self, now: Instant) -> bool {
        self.fills_room()
            && !self.reading_back
            && matches!(self.model.state, State::Waking | State::Active)
            && now.saturating_sub(self.model.last_activity) >= CALL_ENDED
    }

    /// Its pages are in: not pushed out or squeezed, next to nothing in
    /// swap. Its call then takes no fault, only CPU (`crate::rest`).
    pub fn is_resident(&self) -> bool {
        !self.out && !self.squeezed && self.memory.swapped < OUT_SWAPPED_BYTES
    }

    /// Watched between ticks (see `Engine::watched`): held for a
    /// predicted wake, pushed out and idle, or resting paged out.
    pub fn is_watched(&self) -> bool {
        self.held.is_some()
            || (self.model.state == State::Idle && self.out)
            || self.rests_paged_out()
    }

    /// Active on a host meant to be full, with pages out: paged out for
    /// room as it rested between calls, or by its limit.
    pub fn rests_paged_out(&self) -> bool {
        self.fills_room()
            && self.model.state == State::Active
            && (self.squeezed || self.memory.swapped >= OUT_SWAPPED_BYTES)
    }

    /// A transition was seen at `now`: the wake it was held for has come,
    /// unless its history takes what was seen for that call's precursor
    /// (`ActivationHistory::awaits_call`): then it stays held, watched for
    /// the call itself.
    pub fn release_hold(&mut self, now: Instant) {
        if !self.model.history.awaits_call(now) {
            self.held = None;
            self.unmapped = false;
        }
    }

    /// A wake seen: under admission control it queues for room. A stretch
    /// of activity begins with it (`peak`).
    pub fn queue_wake(&mut self, now: Instant) {
        self.peak.begin(now, self.has());
        if self.class == Class::Extend && !self.params.admit_within.is_zero() {
            self.waiting_since = Some(now);
        }
    }

    /// An onset seen (activity after a quiet stretch): where it holds (in
    /// DRAM and swap) less than half its peak, a new stretch of activity
    /// begins, and under admission at the peak it queues as a wake does
    /// (not one already queued: its place stands). Holding more, it goes
    /// on with the stretch it was in: a job stalled on its own swap-ins
    /// for 2 s looks quiet, and queued at its onset it was frozen, pushed
    /// out to its floor and, let in again, stalled anew (bench/peers' grow
    /// cells, session 36: a job frozen three times in 38 s).
    pub fn queue_onset(&mut self, now: Instant) {
        if self.has() >= self.peak.expected() / 2 {
            return;
        }
        self.peak.begin(now, self.has());
        if self.admits_at_peak() && self.waiting_since.is_none() {
            self.waiting_since = Some(now);
        }
    }

    /// An extend context admitted at the peak (`admit_at_peak`, under
    /// admission).
    pub fn admits_at_peak(&self) -> bool {
        self.class == Class::Extend
            && self.params.admit_at_peak
            && !self.params.admit_within.is_zero()
    }

    /// Run in turn under admission at the peak, once past its start: a
    /// context tracked less than `START_GRACE` ago may be a container that
    /// its runtime is starting, and one frozen before `runc start` fails
    /// to start ("cannot start a container in the paused state": issue
    /// 15's scenario, 512 MiB cap, session 37).
    pub fn runs_in_turn(&self, now: Instant) -> bool {
        self.admits_at_peak() && now.saturating_sub(self.tracked_at) >= START_GRACE
    }

    /// All it has: charged, and in swap.
    pub fn has(&self) -> u64 {
        self.memory.usage.saturating_add(self.memory.swapped)
    }

    /// The room admission waits for and keeps for it beyond what it has
    /// (0: none): under admission at the peak, the most it had in a
    /// stretch of activity.
    pub fn peak_room(&self) -> u64 {
        if self.admits_at_peak() {
            self.peak.expected()
        } else {
            0
        }
    }

    /// Leaves the admission queue and runs from `now` (its settling counts
    /// from here).
    pub fn admit(&mut self, now: Instant) {
        self.waiting_since = None;
        self.model.admitted(now);
    }

    /// Woke, or (with `fast_wakes`) had an onset (a wake that came before
    /// it was judged idle), less than `settle` ago: served as a waking
    /// context, for room (first, and not pushed out meanwhile) and for CPU.
    /// (An onset served for one tick only was pushed out again while its
    /// 53 MiB touch went on, which then took 21 s: bench/peers' postgres x
    /// burst scenario.)
    pub fn waking(&self, now: Instant) -> bool {
        match self.model.state {
            State::Waking => true,
            State::Active => {
                self.params.fast_wakes && self.model.had_onset(now, self.params.model().settle)
            }
            State::Idle => false,
        }
    }

    /// Whether, waking and with no room yet for its raise, it waits frozen
    /// for the room rather than fault its pages in against the limit it
    /// has: an extend context under admission (`admit_within` above zero),
    /// for at most `admit_within` after its wake (or onset) began.
    pub fn waits_for_room(&self, now: Instant) -> bool {
        let began = match self.model.state {
            State::Waking => Some(self.model.since),
            State::Active => self.model.onset,
            State::Idle => None,
        };
        self.class == Class::Extend
            && self.waking(now)
            && !self.params.admit_within.is_zero()
            && began.is_some_and(|b| now.saturating_sub(b) < self.params.admit_within)
    }

    /// The CPU weight it runs at (None: left as it is): its class's, or its
    /// class's waking weight while it is an admitted waking context, and,
    /// with `fast_wakes`, while it is idle and out: its next activity is a
    /// wake, which at its class's low weight crept on for up to 2.6 s behind
    /// a busy PostgreSQL
    /// before the kernel's event for it fired (bench/peers' postgres x burst
    /// scenario); idle, it takes no CPU at any weight.
    /// Not waking, a resident one (`is_resident`) runs at
    /// `resident_cpu_weight`, where the class sets one: its warm call takes
    /// a few ms of CPU, a cold call beside it tens at the waking weight.
    /// (bench/faas, session 63: warm calls that came during another
    /// function's cold call were within 8 ms in 29-53% of cases against
    /// 86-93% otherwise; at 1000, p50 1-9 ms lower in five rotated pairs
    /// and those calls within 8 ms in 34-59%: off by default.)
    /// None too for an idle CPU group (`cpu_idle`): the kernel refuses a
    /// weight for one.
    /// An extend context's class weight holds only `beside_critical` (a
    /// critical context is tracked): the low weight is there to leave the
    /// CPU to critical contexts, and without any it only ranked the class's
    /// own contexts against each other, a cold call at the waking weight
    /// before the warm calls beside it at 1. Then it runs at least at the
    /// kernel's default, `WAKE_CPU_WEIGHT`. (bench/faas, session 65, three
    /// rotated rounds each: warm calls during another function's cold call
    /// within 8 ms in 65-75% of cases at 100 against 36-56% at 1 with idle
    /// moves; against base, no difference beyond the spread in one
    /// invocation, 53-75% against 40-48% in the next.)
    pub fn cpu_weight(&self, now: Instant, beside_critical: bool) -> Option<u16> {
        if self.params.cpu_idle {
            return None;
        }
        let class = self.params.cpu_weight?;
        let class = if beside_critical || self.class != Class::Extend {
            class
        } else {
            class.max(WAKE_CPU_WEIGHT)
        };
        let waking = (self.waking(now) && self.waiting_since.is_none())
            || (self.params.fast_wakes && self.model.state == State::Idle && self.out);
        Some(if waking {
            class.max(self.params.wake_cpu_weight)
        } else if self.is_resident() {
            class.max(self.params.resident_cpu_weight.unwrap_or(class))
        } else {
            class
        })
    }

    /// Bytes of its recorded working set, at most all it has (charged plus
    /// in swap): shared memory mapped by several of its processes (a
    /// database's shared buffers, mapped by every backend) is recorded once
    /// per process, and would otherwise count many times over.
    pub fn working_set_bytes(&self) -> u64 {
        self.ws.bytes().min(self.has())
    }
}

#[cfg(test)]
#[path = "context_tests.rs"]
mod tests;
