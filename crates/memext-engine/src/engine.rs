//! The decide step of the daemon's loop, as pure functions over the engine's
//! state: from typed samples to a working-set request, from the models to a
//! plan, and from the plan to ordered, filtered commands the actuator carries
//! out (which knob, which pages, how fast). The actuator reports back what it
//! did ([`Engine::executed`]); only then does the engine believe a context is
//! pushed out, brought back, held or left to someone else.
//!
//! Must not: read a file, a clock or the mover's queue. Everything it needs
//! comes in as an argument (`now`, [`HostFacts`], `busy`).
//!
//! Here: the engine's state, tracking, and a tick's plan. Beside it, by
//! concern: a tick's sample and what is learned from it (`engine_observe`),
//! polls and wakes served between ticks (`engine_between_ticks`), from
//! actions to commands (`engine_commands`), a context paused in the
//! kernel's OOM wait (`engine_oom`), and what a tick's plan is given
//! (`engine_plan_input`).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

pub use crate::command::{BringBack, Command, Decision, Observed, Outcome, PushOut};
pub use crate::context::WAKE_CPU_WEIGHT;
use crate::context::{ClassParams, ContextState, OUT_SWAPPED_BYTES};
use crate::cpu_cap::{cpu_caps, critical_runs};
use crate::model::State;
use crate::planner::{Action, RoomAccount};
use crate::predict::{self, PrefetchReason};
use crate::{Class, ContextId, Instant};

/// How long a chunk's heat lasts before it is demoted one queue.
pub const HEAT_LIFETIME: Duration = Duration::from_secs(300);
/// PSI "some" share (percent, 10 s average) that counts as pressure.
pub const PRESSURE_PSI: f64 = 5.0;
/// Major faults in one tick (after some before) that count as pressure.
pub const PRESSURE_MAJFLT: u64 = 10;
/// While a critical context is under pressure, page-out and prefetch run at
/// this fraction (1/N) of their bandwidth.
pub const THROTTLE_DIVISOR: u64 = 4;

/// Daemon-wide policy.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct EngineParams {
    /// How long before a predicted wake to start bringing a context back.
    pub prefetch_lead: Duration,
    /// How often an active context's working set is recorded.
    pub ws_interval: Duration,
    /// What resting contexts leave free for the next wake to read into;
    /// `None`: the planner's default share of the capacity.
    pub keep_free: Option<u64>,
}

/// What the decisions need to know of the host at this tick.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct HostFacts {
    /// DRAM the selected contexts may use together.
    pub capacity: u64,
    /// The next swap area to be filled is zram (synchronous decompress).
    pub next_swap_is_zram: bool,
    /// Critical contexts have no protection of their own (cgroup v1: no
    /// `memory.min`); the extend contexts' limits are what keeps their room
    /// (see [`crate::limit_room`]). False on v1 too where the daemon is told
    /// not to keep it (`daemon.limit_room = false`).
    pub limits_protect: bool,
    /// Limits below the usage are lowered in the background
    /// ([`Command::Reclaim`]), not written in the daemon's loop.
    pub background_reclaim: bool,
    /// How far the host's hard limit stands above each limit planned
    /// (cgroup v1: the daemon's `act::V1_CHARGE_ROOM`, room for the charges
    /// the kernel makes on a task's behalf; 0 elsewhere). A usage within it
    /// is the context using that room, not memory to take back: lowered
    /// again, it was reclaimed to its floor and given the room once more at
    /// every tick it touched a page of it.
    pub charge_room: u64,
}

/// The engine's state over all contexts, and its decisions.
#[derive(Debug, Clone)]
pub struct Engine {
    params: EngineParams,
    contexts: BTreeMap<ContextId, ContextState>,
    /// Contexts whose knobs someone else changed: never tracked again.
    left_alone: BTreeSet<ContextId>,
    /// The room account of the last plan a wake between ticks was served
    /// by, if it squeezed a resting context (`take_wake_room`).
    wake_room: Option<RoomAccount>,
    /// The first tick's time: contexts tracked after it arrived
    /// (`arrivals`).
    first_tick: Option<Instant>,
}

impl Engine {
    pub fn new(params: EngineParams) -> Self {
        Self {
            params,
            contexts: BTreeMap::new(),
            left_alone: BTreeSet::new(),
            wake_room: None,
            first_tick: None,
        }
    }

    pub fn contexts(&self) -> impl Iterator<Item = &ContextState> {
        self.contexts.values()
    }

    pub fn get(&self, id: &ContextId) -> Option<&ContextState> {
        self.contexts.get(id)
    }

    pub fn contains(&self, id: &ContextId) -> bool {
        self.contexts.contains_key(id)
    }

    /// `id`'s calls known ahead stand for its prediction from now on
    /// (`history::Foretold`, an analysis setting). False if not tracked.
    pub fn foretell(&mut self, id: &ContextId, calls: crate::history::Foretold) -> bool {
        let Some(t) = self.contexts.get_mut(id) else {
            return false;
        };
        t.model.history.foretell(calls);
        true
    }

    pub fn is_left_alone(&self, id: &ContextId) -> bool {
        self.left_alone.contains(id)
    }

    /// Starts tracking a context; false if it is tracked already or left alone.
    pub fn track(
        &mut self,
        id: ContextId,
        class: Class,
        params: ClassParams,
        now: Instant,
    ) -> bool {
        if self.left_alone.contains(&id) || self.contexts.contains_key(&id) {
            return false;
        }
        let state = ContextState::new(id.clone(), class, params, now);
        self.contexts.insert(id, state);
        true
    }

    /// Resumes a context from a saved state (a restarted daemon): all it had
    /// learned, under the class and parameters the policy gives it now. False
    /// if it is tracked already or left alone.
    pub fn resume(&mut self, mut state: ContextState, class: Class, params: ClassParams) -> bool {
        if self.left_alone.contains(&state.id) || self.contexts.contains_key(&state.id) {
            return false;
        }
        state.class = class;
        state.params = params;
        // The daemon thaws what an earlier run left frozen: it runs.
        state.frozen = false;
        state.waiting_since = None;
        self.contexts.insert(state.id.clone(), state);
        true
    }

    /// Stops tracking a context (gone, or no longer selected).
    pub fn forget(&mut self, id: &ContextId) -> bool {
        self.contexts.remove(id).is_some()
    }

    /// The tick's decisions. `busy`: the mover has a job queued or running
    /// for that context.
    pub fn decide(
        &mut self,
        now: Instant,
        host: &HostFacts,
        busy: &dyn Fn(&ContextId) -> bool,
    ) -> Decision {
        self.first_tick.get_or_insert(now);
        let predicted = self.predictions(now);
        let newly_held = self.hold_the_resident_due(now, &predicted);
        let input = self.plan_input_with(now, host.capacity, predicted);
        let plan = self.plan(&input, now);
        for (c, target) in input.contexts.iter().zip(&plan.targets) {
            if let Some(t) = self.contexts.get_mut(&c.key) {
                t.target = *target;
            }
        }
        let pressed: Vec<ContextId> = self
            .contexts
            .values()
            .filter(|t| t.class == Class::Critical && t.under_pressure)
            .map(|t| t.id.clone())
            .collect();
        let commands = self.commands(&plan.actions, plan.throttle, now, host, busy, None);
        // Those that wait frozen for their raise's room stay frozen.
        let held: BTreeSet<ContextId> = commands
            .iter()
            .filter(|c| matches!(c, Command::Freeze { frozen: true, .. }))
            .map(|c| c.id().clone())
            .collect();
        let admission = self.admission(&plan.actions, now, &held);
        let mut commands = self.without_refreezes(commands);
        // Freezes before anything else; thaws once the limits are raised and
        // the bring-backs queued.
        let (freezes, thaws): (Vec<Command>, Vec<Command>) = admission
            .into_iter()
            .partition(|c| matches!(c, Command::Freeze { frozen: true, .. }));
        commands.splice(0..0, freezes);
        commands.extend(thaws);
        commands.extend(self.map_the_held(&newly_held, &commands, now, host, busy));
        // Each class's CPU weight, every tick (the actuator writes only a
        // change, and notices a weight someone else set); an admitted waking
        // context runs at the kernel's default until it settles.
        let critical = self.any_critical();
        commands.extend(self.contexts.values().filter_map(|t| {
            Some(Command::CpuWeight {
                id: t.id.clone(),
                weight: t.cpu_weight(now, critical)?,
            })
        }));
        // An idle CPU group, for the classes that ask for it (asserted like
        // a weight: someone else's change is noticed).
        commands.extend(
            self.contexts
                .values()
                .filter(|t| t.params.cpu_idle)
                .map(|t| Command::CpuIdle { id: t.id.clone() }),
        );
        // A class's CPU budget while a critical context runs.
        commands.extend(cpu_caps(self.contexts.values(), now));
        let commands = self.drop_repeats(commands, now);
        Decision {
            plan,
            commands,
            pressed,
            critical_runs: critical_runs(self.contexts.values(), now),
        }
    }

    /// An extend context whose periodic wake is due within `prefetch_lead`
    /// and that has nothing out to read back is held as it is: kept (not
    /// pushed out before its call) and watched, so that its warm call, a
    /// few ms of CPU and no fault, is seen and recorded. (Held only by a
    /// read-back before, a timer's function left resident went unwatched,
    /// its warm call was missed at the tick, and its history's period was
    /// broken by the gap for the rest of a bench/faas run.)
    /// `predicted`: `predictions(now)`.
    ///
    /// A hold ends at its end (`until`), and one for a periodic wake as soon
    /// as its history no longer has that wake due (`predict::is_due`; a wake
    /// recorded ends it sooner, `ContextState::release_hold`). Left past its end,
    /// a hold kept a function that was lowered meanwhile from being marked
    /// out and read back: in bench/faas, held from just after one call
    /// (taken for the call's precursor) to its next, lowered to 4 MiB as
    /// it rested, its next call cold.
    ///
    /// Returns the contexts it began to hold.
    fn hold_the_resident_due(
        &mut self,
        now: Instant,
        predicted: &[Option<PrefetchReason>],
    ) -> Vec<ContextId> {
        let lead = self.params.prefetch_lead;
        let hold_until = now + 2 * lead;
        let mut began = Vec::new();
        for (t, p) in self.contexts.values_mut().zip(predicted) {
            let ended = t.held.is_some_and(|(until, reason)| {
                now >= until
                    || (reason == PrefetchReason::Periodic
                        && !predict::is_due(&t.model.history, now, lead))
            });
            if ended {
                t.held = None;
            }
            let due = *p == Some(PrefetchReason::Periodic);
            let resident = !t.out && !t.squeezed && t.memory.swapped < OUT_SWAPPED_BYTES;
            if due && resident && t.class == Class::Extend && t.held.is_none() {
                t.held = Some((hold_until, PrefetchReason::Periodic));
                began.push(t.id.clone());
            }
        }
        began
    }

    /// For the resident contexts just held for a periodic wake whose class
    /// maps what it kept (`map_kept`), a predicted bring-back: it reads
    /// back what little is out and maps every 2 MiB block held whole as a
    /// huge page before the call. Also, where its class maps back
    /// (`map_back`), for one a refill read back since its last wake
    /// (`ContextState::unmapped`): its pages wait in the swap cache, and
    /// the bring-back maps them as a periodic one does. Not where the mover
    /// is busy with it or the tick sends it one already.
    fn map_the_held(
        &self,
        held: &[ContextId],
        commands: &[Command],
        now: Instant,
        host: &HostFacts,
        busy: &dyn Fn(&ContextId) -> bool,
    ) -> Vec<Command> {
        held.iter()
            .filter_map(|id| self.contexts.get(id))
            .filter(|t| t.params.map_back && (t.params.map_kept || t.unmapped) && !busy(&t.id))
            .filter(|t| {
                !commands
                    .iter()
                    .any(|c| matches!(c, Command::BringBack(b) if b.id == t.id))
            })
            .map(|t| Command::BringBack(self.bring_back(t, PrefetchReason::Periodic, 1, now, host)))
            .collect()
    }

    /// Applies the plan's admission decisions: a queued context the plan
    /// does not keep waiting is admitted (and thawed, if memext froze it);
    /// one it keeps waiting is frozen. Returns the freeze and thaw commands.
    /// `held`: frozen this tick to wait for their raise's room (left so).
    fn admission(
        &mut self,
        actions: &[Action],
        now: Instant,
        held: &BTreeSet<ContextId>,
    ) -> Vec<Command> {
        let waits: BTreeSet<&ContextId> = actions
            .iter()
            .filter(|a| matches!(a, Action::Wait { .. }))
            .map(Action::key)
            .collect();
        let mut out = Vec::new();
        for t in self.contexts.values_mut().filter(|t| !held.contains(&t.id)) {
            let waiting = waits.contains(&t.id);
            if t.waiting_since.is_some() && !waiting {
                t.admit(now);
            }
            // Out of its turn as it ran (admission at the peak): it queues.
            if waiting && t.waiting_since.is_none() {
                t.waiting_since = Some(now);
            }
            if waiting != t.frozen {
                out.push(Command::Freeze {
                    id: t.id.clone(),
                    frozen: waiting,
                });
            }
        }
        out
    }

    /// What the actuator did with a command: only now is a context believed
    /// pushed out, brought back (and held for its predicted wake), or
    /// someone else's.
    pub fn executed(&mut self, cmd: &Command, outcome: Outcome, now: Instant) {
        let id = cmd.id();
        if outcome == Outcome::Foreign {
            self.contexts.remove(id);
            self.left_alone.insert(id.clone());
            return;
        }
        let lead = self.params.prefetch_lead;
        let Some(t) = self.contexts.get_mut(id) else {
            return;
        };
        // Done or failed, it is not sent again for a while (a write the
        // kernel refuses, a v1 limit below what it can reclaim to, is tried
        // again later, not at every tick).
        t.applied.record(cmd, now);
        if outcome != Outcome::Done {
            if matches!(cmd, Command::Freeze { frozen: true, .. }) {
                // Cannot be frozen (no freezer): it runs, as without admission.
                t.admit(now);
            }
            return;
        }
        match cmd {
            Command::Freeze { frozen, .. } => t.frozen = *frozen,
            Command::BringBack(b) => {
                t.out = false;
                t.reading_back = true;
                t.squeezed = false;
                // Held until well past the predicted wake; a wake ends it sooner.
                // (A refill is for no wake in particular: not held.)
                let predicted = matches!(
                    b.reason,
                    PrefetchReason::Periodic | PrefetchReason::FollowsLeader
                );
                t.held = predicted.then(|| (now + 2 * lead, b.reason));
                t.unmapped = b.reason == PrefetchReason::Refill && !b.map_back;
            }
            // An active context paged out for room stays as it is: its
            // working set is still recorded as it runs, and it is pushed out
            // again whenever it is squeezed anew; its next onset or
            // predicted call brings it back.
            Command::PushOut(_) => {
                t.took_memory(now);
                t.unmapped = false;
                if t.model.state == State::Idle {
                    t.out = true;
                } else {
                    t.squeezed = true;
                }
            }
            Command::Limit { bytes, .. } => {
                t.lowered_to(*bytes, now);
                if t.takes_pages(*bytes) {
                    t.note_lowered(*bytes);
                }
                t.limit = Some(*bytes);
                // A write of the limit ends a lowering in the background
                // (the actuator stops it first).
                t.reclaiming = None;
            }
            Command::Reclaim { bytes, .. } => {
                t.lowered_to(*bytes, now);
                t.note_lowered(*bytes);
                t.reclaiming = Some(*bytes);
            }
            Command::Protect { .. }
            | Command::CpuWeight { .. }
            | Command::CpuMax { .. }
            | Command::CpuIdle { .. } => {}
        }
    }

    /// A lowering in the background ended with the limit at `held` (its
    /// target, or where the kernel stopped): only now is its room free.
    /// `None`: it failed, the limit is what it was.
    pub fn reclaimed(&mut self, id: &ContextId, held: Option<u64>, now: Instant) {
        let Some(t) = self.contexts.get_mut(id) else {
            return;
        };
        let Some(target) = t.reclaiming.take() else {
            return; // ended by a later write of the limit
        };
        // Its last steps took pages too, if it ended below what it held:
        // their refaults are memext's.
        t.lowered_to(held.unwrap_or(target), now);
        if let Some(b) = held {
            t.limit = Some(b);
            t.applied.limit = Some((b, now));
            // It holds no more than that now (the host's charge room
            // aside). An idle context's usage is read rarely: judged from
            // the sample before the lowering, it stood above the limit, and
            // every tick until the next sample lowered it again from its
            // floor, taking the pages it had touched at rest. What it
            // gave went to swap, as far as memext knows until then.
            let freed = t.memory.usage.saturating_sub(b);
            t.memory.usage -= freed;
            t.memory.swapped += freed;
        }
    }
}

#[path = "engine_commands.rs"]
mod commands;

#[path = "engine_observe.rs"]
mod observe;

#[path = "engine_between_ticks.rs"]
mod between_ticks;

#[path = "engine_oom.rs"]
mod oom;

#[path = "engine_plan_input.rs"]
mod plan_input;
pub use oom::{oom_raise, OOM_STEP};

#[cfg(test)]
#[path = "engine_tests.rs"]
mod tests;
