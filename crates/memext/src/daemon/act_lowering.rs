//! The act step's lowerings below the usage: handed to the reclaimer (off
//! the loop, recorded in the ledger first), stopped when a write of the
//! limit comes first, and settled in the ledger where they ended.

use memext_cgroup::{AnyCgroup, CgroupError, Limit, LimitKnob, MemoryCgroup};
use memext_engine::engine::{Command, Outcome};
use memext_engine::ContextId;

use super::{memory_limit_knob, planned_limit, written_limit, Actuator};
use crate::daemon::events;
use crate::daemon::ledger::{LedgerError, Lowering};
use crate::daemon::reclaim::{self, Reclaimer, STEP};

impl Actuator {
    /// Hands a lowering below the usage to the reclaimer, recorded in the
    /// ledger first; without a reclaimer, written here as a limit.
    /// `resting`: the reclaimer may page the context out first (if so set);
    /// `yields`: it waits while a woken context is read back (as every
    /// lowering does with `daemon.yield_to_wakes = true`, none with false).
    pub(super) fn reclaim(
        &mut self,
        id: &ContextId,
        cg: &AnyCgroup,
        bytes: u64,
        urgent: bool,
        resting: bool,
        yields: bool,
    ) -> Outcome {
        if urgent && self.reclaimer.as_ref().is_some_and(|r| r.hurry(id)) {
            return Outcome::Done; // on its way down already
        }
        if self.reclaimer.is_none() {
            return self.execute(
                &Command::Limit {
                    id: id.clone(),
                    bytes,
                },
                cg,
            );
        }
        let Some(knob) = self.limit_knob(id, cg) else {
            return Outcome::Foreign;
        };
        let from = match self.ledger.begin_lowering(cg, knob, bytes) {
            Ok(Lowering::From(Limit::Bytes(b))) => b,
            // No number to step down from: one write.
            Ok(Lowering::From(Limit::Max)) => bytes.saturating_add(STEP),
            Ok(Lowering::Nothing) => return Outcome::Failed,
            Ok(Lowering::Foreign { found, ours }) => {
                self.report_foreign(id, knob, found, ours);
                return Outcome::Foreign;
            }
            Err(LedgerError::Cgroup(CgroupError::Vanished { .. })) => return Outcome::Failed,
            Err(e) => {
                if self.said_failed.insert((id.clone(), knob)) {
                    events::knob_failed(id, &knob.to_string(), &bytes.to_string(), &e);
                }
                return Outcome::Failed;
            }
        };
        if let Some(r) = self.reclaimer.as_ref() {
            r.submit(reclaim::Job {
                id: id.clone(),
                path: cg.path().clone(),
                knob,
                from,
                to: bytes,
                urgent,
                page_out: resting,
                yields: self.yield_to_wakes.unwrap_or(yields),
                leave_at: written_limit(knob, bytes),
            });
        }
        Outcome::Done
    }

    /// A write of `id`'s limit ends its lowering in the background first
    /// (the reclaimer writes nothing more), settled at what the knob holds.
    pub(super) fn stop_reclaim(&mut self, id: &ContextId, cg: &AnyCgroup) {
        if !self.reclaimer.as_ref().is_some_and(|r| r.stop_job(id)) {
            return;
        }
        let held = self.settle(id, cg, memory_limit_knob(cg.version()), None);
        self.reclaimed.push((id.clone(), held));
    }

    /// Records in the ledger where a lowering ended; the limit it holds, as
    /// planned (`planned_limit`). `to`: the target it was to reach, if it
    /// ran its course (the room above it left then is not a refusal).
    fn settle(
        &mut self,
        id: &ContextId,
        cg: &AnyCgroup,
        knob: LimitKnob,
        to: Option<u64>,
    ) -> Option<u64> {
        let left_at = to.map(|to| Limit::Bytes(written_limit(knob, to)));
        match self.ledger.settle_lowering(cg, knob, left_at) {
            Ok(Some(Limit::Bytes(b))) => Some(planned_limit(knob, b)),
            Ok(Some(Limit::Max)) => None,
            Ok(None) => {
                self.say_foreign(id, knob, "(changed)", "(lowering)");
                None
            }
            Err(e) => {
                tracing::debug!("{id}: settling its lowered limit: {e:#}");
                None
            }
        }
    }

    /// The lowerings that ended since the last call, settled in the ledger:
    /// each context with the limit it holds now. `cg` finds a context's
    /// cgroup (none: it left, nothing to settle).
    /// Also whether a wake waited for one of them.
    pub fn take_reclaimed<'a>(
        &mut self,
        cg: impl Fn(&ContextId) -> Option<&'a AnyCgroup>,
    ) -> (Vec<(ContextId, Option<u64>)>, bool) {
        let ended = self
            .reclaimer
            .as_ref()
            .map(Reclaimer::take_ended)
            .unwrap_or_default();
        let mut out = std::mem::take(&mut self.reclaimed);
        let waited = ended.iter().any(|e| e.urgent);
        for e in ended {
            events::reclaimed(&e);
            if e.stopped {
                continue; // settled by stop_reclaim
            }
            let held = cg(&e.id).and_then(|c| self.settle(&e.id, c, e.knob, Some(e.to)));
            out.push((e.id, held));
        }
        (out, waited)
    }
}
