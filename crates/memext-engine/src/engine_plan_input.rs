//! A tick's plan input: what each context is to the pure planner (its
//! state, what it holds and has out, what is predicted of it) and the room
//! this engine keeps free.

use super::Engine;
use crate::cpu_cap::critical_runs;
use crate::model::State;
use crate::planner::{default_reserve, plan_keeping, ContextInput, Plan, PlanInput, Queued};
use crate::predict::{self, PredictParams, PrefetchReason};
use crate::Instant;
use std::time::Duration;

/// Room for arrivals: what the contexts that arrived within this window
/// hold is kept free as well, for the next ones to start into. Contexts
/// that start one after another (a host's containers started at once, a
/// rollout) charge faster than memext makes room: a context at rest is
/// pushed out at one tick and its limit falls at the next, while
/// bench/faas' first 25 functions (1.4 GiB of heaps) are up 5-6 s after
/// the first starts. What they cannot charge
/// into free room they charge against the cap, and the kernel's reclaim
/// there takes a few pages of every function at a time: the swap slots
/// that every later read-back follows, laid 2.6 pages to a run of
/// consecutive slots, against 60 at a limit of each one's own and a whole
/// heap in one run paged out by address (`docs/faas/s82-2026-12-07/`,
/// `filllay2.py`: 24 processes of 48 MiB; read back at 617-657 MiB/s
/// against 1,112-1,117 and 1,259-1,374). Two ticks: the push-out and
/// the lowering that frees its room.
pub const ARRIVAL_WINDOW: Duration = Duration::from_secs(2);
/// At most this share of the capacity is kept for arrivals.
pub const ARRIVAL_MAX_DIV: u64 = 4;

impl Engine {
    /// What `predict` says of each context at `now` (in the order of
    /// `contexts`): worked out once a tick, for the hold and the plan.
    pub(super) fn predictions(&self, now: Instant) -> Vec<Option<PrefetchReason>> {
        let models: Vec<_> = self.contexts.values().map(|t| &t.model).collect();
        let pp = PredictParams {
            lead: self.params.prefetch_lead,
            ..Default::default()
        };
        predict::decide(now, &models, &pp)
    }

    /// The pure plan, with the room this engine keeps free: the configured
    /// or default reserve, and room for arrivals (`arrivals`).
    pub(super) fn plan(&self, input: &PlanInput, now: Instant) -> Plan {
        let reserve = self
            .params
            .keep_free
            .unwrap_or_else(|| default_reserve(input));
        let arriving = self.arrivals(now).min(input.capacity / ARRIVAL_MAX_DIV);
        plan_keeping(input, reserve.saturating_add(arriving))
    }

    /// What the contexts that arrived within `ARRIVAL_WINDOW` hold: as much
    /// room is kept free for the next ones. Contexts tracked at the first
    /// tick (there when the daemon started) did not arrive.
    pub(super) fn arrivals(&self, now: Instant) -> u64 {
        let Some(first) = self.first_tick else {
            return 0;
        };
        self.contexts
            .values()
            .filter(|t| t.tracked_at > first && now.saturating_sub(t.tracked_at) < ARRIVAL_WINDOW)
            .map(|t| t.charged())
            .sum()
    }

    pub(super) fn plan_input(&self, now: Instant, capacity: u64) -> PlanInput {
        self.plan_input_with(now, capacity, self.predictions(now))
    }

    pub(super) fn plan_input_with(
        &self,
        now: Instant,
        capacity: u64,
        prefetch: Vec<Option<PrefetchReason>>,
    ) -> PlanInput {
        let critical_runs = critical_runs(self.contexts.values(), now);
        let contexts = self
            .contexts
            .values()
            .zip(prefetch)
            .map(|(t, p)| {
                let call_ended = t.call_ended(now);
                ContextInput {
                    key: t.id.clone(),
                    class: t.class,
                    // An onset is a wake to the plan until it settles; on a
                    // host meant to be full, until its call is over.
                    state: if call_ended {
                        State::Active
                    } else if t.waking(now) {
                        State::Waking
                    } else {
                        t.model.state
                    },
                    // A read-back on its way: planned with all it has.
                    usage: t.charged(),
                    working_set: t.working_set_bytes(),
                    swapped: if t.reading_back { 0 } else { t.memory.swapped },
                    // Never below what its own swap limit keeps in DRAM.
                    floor: t.params.floor.max(t.memory.unswappable),
                    headroom_pct: t.params.headroom_pct,
                    under_pressure: t.under_pressure,
                    // What is out comes back once (then it is in): what memext
                    // pushed out, and with `fast_wakes` or on a host meant to be
                    // full what the kernel put in swap (`note_paged_out`). On a
                    // host meant to be full (`when-needed`), so do an active context's
                    // pages in swap, whoever put them there, at its onset or its
                    // predicted call (the plan does so only if it has some).
                    // Not under `when-idle` alone: there the onsets of
                    // bench/peers' noise were read back at nice 0, CPU its
                    // critical workloads needed (postgres x burst 0.42x against
                    // 0.61x; measured again with `fast_wakes`, docs/peers/HISTORY.md). One
                    // brought back for a predicted wake stays held. (Every tick
                    // while a context settled, its pages were read again: 1001
                    // read-backs in a bench/faas trace instead of 250.)
                    prefetch: p
                        .filter(|_| t.out || (t.model.state == State::Active && t.fills_room()))
                        .or(t.held.filter(|(until, _)| now < *until).map(|(_, r)| r)),
                    queued: t.waiting_since.map(|since| Queued {
                        since,
                        overdue: now.saturating_sub(since) >= t.params.admit_within,
                        at_once: t.params.wakes_at_once.filter(|_| critical_runs),
                    }),
                    keep_while_room: t.fills_room(),
                    quiet: t.is_quiet(now) || call_ended,
                    // Only the planner's keep order reads it: not worked out for
                    // the (default) contexts pushed out when idle.
                    expected_wake_in: t
                        .fills_room()
                        .then(|| {
                            let m = &t.model;
                            m.history.expected_wake_in(now, m.watched_since)
                        })
                        .flatten(),
                    growth: t.growth.margin(),
                    rest_slack: t.rest_growth.rest_slack(),
                    peak: t.peak_room(),
                    in_turn: t.runs_in_turn(now).then(|| t.peak.began()),
                }
            })
            .collect();
        PlanInput { capacity, contexts }
    }
}
