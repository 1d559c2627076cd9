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
        // Another lowering of this context on its way is stopped first,
        // settled where it stood. Left to run, it went on below this one's
        // target while the ledger expected no lower than that target: it
        // took the knob for someone else's, and the context was left alone
        // for the rest of the run (bench/faas, session 78: a function's
        // lowering to 45 MiB, a second one to 92 MiB asked meanwhile; its
        // next timer call came cold). And this one, begun from a limit read
        // before the first went down, would have raised it back. Where
        // this one goes ahead, the engine is told of it alone; else of
        // where the first stopped.
        let stopped = self
            .reclaimer
            .as_ref()
            .is_some_and(|r| r.in_flight(id))
            .then(|| self.stop_and_settle(id, cg))
            .flatten();
        // Recorded in the ledger, then handed to the reclaimer.
        let outcome = 'submitted: {
            let Some(knob) = self.limit_knob(id, cg) else {
                break 'submitted Outcome::Foreign;
            };
            let from = match self.ledger.begin_lowering(cg, knob, bytes) {
                Ok(Lowering::From(Limit::Bytes(b))) => b,
                // No number to step down from: one write.
                Ok(Lowering::From(Limit::Max)) => bytes.saturating_add(STEP),
                Ok(Lowering::Nothing) => break 'submitted Outcome::Failed,
                Ok(Lowering::Foreign { found, ours }) => {
                    self.report_foreign(id, knob, found, ours);
                    break 'submitted Outcome::Foreign;
                }
                Err(LedgerError::Cgroup(CgroupError::Vanished { .. })) => {
                    break 'submitted Outcome::Failed
                }
                Err(e) => {
                    if self.said_failed.insert((id.clone(), knob)) {
                        events::knob_failed(id, &knob.to_string(), &bytes.to_string(), &e);
                    }
                    break 'submitted Outcome::Failed;
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
        };
        if let (Some(held), false) = (stopped, outcome == Outcome::Done) {
            self.reclaimed.push((id.clone(), held));
        }
        outcome
    }

    /// A write of `id`'s limit ends its lowering in the background first
    /// (the reclaimer writes nothing more), settled at what the knob holds.
    pub(super) fn stop_reclaim(&mut self, id: &ContextId, cg: &AnyCgroup) {
        if let Some(held) = self.stop_and_settle(id, cg) {
            self.reclaimed.push((id.clone(), held));
        }
    }

    /// Stops `id`'s lowering in the background, if any, and settles it in
    /// the ledger: the limit it holds (`settle`); None without a lowering.
    fn stop_and_settle(&mut self, id: &ContextId, cg: &AnyCgroup) -> Option<Option<u64>> {
        if !self.reclaimer.as_ref().is_some_and(|r| r.stop_job(id)) {
            return None;
        }
        Some(self.settle(id, cg, memory_limit_knob(cg.version()), None))
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use memext_cgroup::{CgroupPath, Hierarchy};

    use super::*;
    use crate::daemon::ledger::Ledger;
    use crate::daemon::wake_gate::WakeGate;

    const MIB: u64 = 1 << 20;
    const DOCKER: &str = "/docker/a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1";

    /// A lowering asked while another of the same context runs stops that
    /// one first (it waits at the wake gate here, as a lowering does while
    /// a woken context is read back), settled in the ledger where it stood
    /// and not reported to the engine, which is told of the second alone.
    #[test]
    fn a_second_lowering_of_a_context_stops_the_first() {
        let t = crate::daemon::fixtures::copied("v1");
        let h = Hierarchy::probe(t.path()).expect("v1");
        let cg = h
            .open(&CgroupPath::parse(DOCKER).expect("path"))
            .expect("open");
        let id = ContextId::new(DOCKER);
        let ledger = Ledger::load(&t.path().join("state/daemon.json")).expect("ledger");
        let mut act = Actuator::new(ledger, None);
        let gate = WakeGate::default();
        act.start_reclaimer(Reclaimer::start(h.clone(), false, gate.clone()), None);
        let serving = gate.serve();
        let lower = |act: &mut Actuator, bytes| act.reclaim(&id, &cg, bytes, false, false, true);
        assert_eq!(lower(&mut act, 45 * MIB), Outcome::Done);
        // Taken up by the reclaimer, it waits at the gate (up to 300 ms).
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(lower(&mut act, 92 * MIB), Outcome::Done);
        assert!(
            act.reclaimed.is_empty(),
            "the engine is told of the second alone"
        );
        drop(serving);
        let mut ended = Vec::new();
        for _ in 0..500 {
            ended.extend(
                act.reclaimer
                    .as_ref()
                    .map(Reclaimer::take_ended)
                    .unwrap_or_default(),
            );
            if ended.len() == 2 {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        assert_eq!(ended.len(), 2, "{ended:?}");
        assert!(
            ended[0].stopped && ended[0].steps == 0,
            "the first went on: {:?}",
            ended[0]
        );
        assert_eq!((ended[1].to, ended[1].reached), (92 * MIB, 93 * MIB));
        assert!(!act.ledger().is_foreign(cg.path()));
    }
}
