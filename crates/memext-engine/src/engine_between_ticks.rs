//! Between ticks: which contexts are watched, their polled CPU judged, and
//! a wake seen there served at once, before the next tick's plan.

use std::time::Duration;

use super::{Engine, HostFacts};
use crate::command::Command;
use crate::context::Applied;
use crate::cpu_cap::cpu_caps;
use crate::model::{Known, Transition};
use crate::planner::{Action, RoomAccount};
use crate::predict::PrefetchReason;
use crate::touch::{self, Ask};
use crate::{ContextId, Instant};

impl Engine {
    /// The contexts to watch between ticks: idle ones memext pushed out or
    /// holds for a predicted wake. A held context is watched too: mapped back,
    /// its wake takes no fault and a few ms of CPU, which a tick-long window
    /// dilutes below the activity threshold; a wake missed there is missing
    /// from its history, and the next prediction with it. So is, on a host
    /// meant to be full, an active context paged out while it rested
    /// between calls: its next call is seen as it comes (an onset), not at
    /// the next tick, while it faults its pages in one by one. And an
    /// active one held for a predicted call: its warm call (2 ms of CPU)
    /// is below a tick's threshold, and a call missing from its history
    /// broke its period for good (a timer's calls cold from its fifth on in
    /// bench/faas).
    pub fn watched(&self) -> Vec<ContextId> {
        self.contexts
            .values()
            .filter(|t| t.is_watched())
            .map(|t| t.id.clone())
            .collect()
    }

    /// Whether a call of `id` seen while it is busy (`Transition::Call`:
    /// active, not quiet, so no onset) is served as an onset is (its limit
    /// raised to all it has, its pages read back in bulk): on a host meant
    /// to be full, paged out since its last call (`rests_paged_out`), the
    /// call faults them in one by one otherwise. (bench/faas, session 59:
    /// a function squeezed 1.6 s after its call, its next call seen 23 ms
    /// in by its kernel event and only recorded: 105-145 ms, 17.5 thousand
    /// major faults, in each of three runs.)
    pub fn serves_call(&self, id: &ContextId) -> bool {
        self.contexts
            .get(id)
            .is_some_and(|t| !t.frozen && t.rests_paged_out())
    }

    /// A between-ticks sample of a watched context's CPU time: whether it
    /// woke, or (active, resting between calls) had an onset. Either is
    /// served at once (`serve_wake`).
    pub fn poll(&mut self, id: &ContextId, at: Instant, cpu: Duration) -> Option<Transition> {
        self.poll_asking(id, at, cpu, &mut touch::unknown)
    }

    /// `poll`, asking the host what the context touched where its CPU alone
    /// says it was called with its pages in (`memext_engine::touch`).
    pub fn poll_asking(
        &mut self,
        id: &ContextId,
        at: Instant,
        cpu: Duration,
        ask: Ask<'_>,
    ) -> Option<Transition> {
        let t = self.contexts.get_mut(id)?;
        let known = Known {
            expected: t.held.is_some(),
            resident: t.is_resident(),
            polled: true,
        };
        let cpu = t.own_cpu(at, cpu, 0, 0, false);
        let tr = t
            .model
            .poll_asking(at, cpu, &t.params.model(), known, ask)?;
        t.release_hold(at);
        match tr {
            Transition::Woke => t.queue_wake(at),
            Transition::Onset => t.queue_onset(at),
            // Done with its pages in: nothing to serve, its knobs stand.
            Transition::WarmCall => return Some(tr),
            _ => {}
        }
        t.applied = Applied::default();
        Some(tr)
    }

    /// Where the room of the plan that served the last wake between ticks
    /// went, if that plan squeezed a resting context (taken once).
    pub fn take_wake_room(&mut self) -> Option<RoomAccount> {
        self.wake_room.take()
    }

    /// The commands that serve a wake seen between ticks at once: the
    /// context's limit raised to all it had, and its working set brought back
    /// (never throttled: it is waiting). Under admission control, only if the
    /// plan admits it now; else it is frozen until a tick admits it.
    pub fn serve_wake(
        &mut self,
        id: &ContextId,
        at: Instant,
        host: &HostFacts,
        busy: &dyn Fn(&ContextId) -> bool,
    ) -> Vec<Command> {
        let queued = self
            .contexts
            .get(id)
            .is_some_and(|t| t.waiting_since.is_some());
        // On v1 the others' limits make the wake's room (without, the
        // parent's cap reclaims it, in the kernel's order): where they keep
        // a critical context's room, and where a lowering below the usage
        // goes to the background. Not else: from usages a tick old, such
        // writes reclaimed in the daemon's loop, squeezing bench/faas'
        // functions just read back for their calls.
        let critical = self.any_critical();
        let protect = host.limits_protect && (host.background_reclaim || critical);
        let mut plan =
            (queued || protect).then(|| self.plan(&self.plan_input(at, host.capacity), at));
        // Moved out, not copied: the rest of the plan does not read it.
        self.wake_room = plan
            .as_mut()
            .filter(|p| !p.room.squeezed.is_empty())
            .map(|p| std::mem::take(&mut p.room));
        if let Some(plan) = plan.as_ref().filter(|_| queued) {
            let waits = plan
                .actions
                .iter()
                .any(|a| matches!(a, Action::Wait { key } if key == id));
            if waits {
                return vec![Command::Freeze {
                    id: id.clone(),
                    frozen: true,
                }];
            }
            if let Some(t) = self.contexts.get_mut(id) {
                t.admit(at);
            }
        }
        let Some(t) = self.contexts.get(id) else {
            return Vec::new();
        };
        let bytes = t.memory.usage.max(t.working_set_bytes()) + t.memory.swapped;
        // Where the others' limits keep the critical contexts' room, those
        // the plan lowers for this wake are lowered with it (first).
        let mut actions: Vec<Action> = plan
            .filter(|_| protect)
            .map(|p| p.actions)
            .unwrap_or_default()
            .into_iter()
            .filter(|a| {
                matches!(a, Action::Limit { key, bytes } if key != id
                    && self.contexts.get(key).is_some_and(|o| *bytes < o.limit_in_force()))
            })
            .collect();
        actions.extend([
            Action::Limit {
                key: id.clone(),
                bytes: bytes.max(t.target),
            },
            Action::BringBack {
                key: id.clone(),
                reason: PrefetchReason::Woke,
            },
        ]);
        let background = (!critical).then_some(id);
        let mut out =
            self.without_refreezes(self.commands(&actions, false, at, host, busy, background));
        out.extend(t.cpu_weight(at, critical).map(|weight| Command::CpuWeight {
            id: id.clone(),
            weight,
        }));
        out.extend(
            cpu_caps(self.contexts.values(), at)
                .into_iter()
                .filter(|c| c.id() == id),
        );
        self.drop_repeats(out, at)
    }
}
