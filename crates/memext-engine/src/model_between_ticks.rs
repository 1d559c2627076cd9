//! A context's readings between ticks: its CPU polled while it rests
//! (`poll`), and the kernel's word that a task of it waits for memory at
//! its limit (`demand`).

use std::time::Duration;

use super::{ContextModel, Judged, Known, ModelParams, State, Transition};
use crate::activity::{cpu_above, MIN_CPU_SPAN};
use crate::touch::{self, Ask};
use crate::Instant;

impl ContextModel {
    /// A between-ticks reading of an idle (or active but quiet) context's
    /// CPU time (`cpu` at `at`): whether it woke (or had an onset), or,
    /// with its pages in (`known.resident`), had a warm call (`rest`).
    /// Judged against the last tick's reading or a later poll's, over at
    /// least `MIN_CPU_SPAN` (see there: a sleeping runtime's housekeeping
    /// is no wake); the tick's own reference is left alone, so the next
    /// tick still judges its whole interval.
    ///
    /// `known.expected`: a wake is due (the context is held in DRAM, mapped back,
    /// for a predicted one). Such a wake takes no fault and a few ms of CPU,
    /// so it is judged over the poll's own window, as it comes; a false one
    /// costs no read-back there, only an early entry in the history.
    ///
    /// With its pages in, CPU that says "call" is one only if the memory it
    /// touched says so too (`ask`, see `touch`): a held context's runtime
    /// took 0.5-7 ms bursts in a 20 ms poll for its call 1-5 s early, and
    /// the call itself then went unseen.
    pub fn poll(
        &mut self,
        at: Instant,
        cpu: Duration,
        p: &ModelParams,
        known: Known,
    ) -> Option<Transition> {
        self.poll_asking(at, cpu, p, known, &mut touch::unknown)
    }

    /// `poll`, asking the host what it touched where its CPU says "call".
    pub fn poll_asking(
        &mut self,
        at: Instant,
        cpu: Duration,
        p: &ModelParams,
        known: Known,
        ask: Ask<'_>,
    ) -> Option<Transition> {
        self.judge_as_polled(at, cpu, p, known, ask, true)
    }

    /// `poll_asking`; `learn`: a quiet reading teaches the rest and is the
    /// next poll's reference (not so for a tick's reading judged as a
    /// poll's: `observe_asking`).
    pub(super) fn judge_as_polled(
        &mut self,
        at: Instant,
        cpu: Duration,
        p: &ModelParams,
        known: Known,
        ask: Ask<'_>,
        learn: bool,
    ) -> Option<Transition> {
        // Active but quiet, its next activity is an onset, seen as soon as
        // a wake would be; busy, it is the tick's to judge.
        let resting = self.state == State::Active && self.is_quiet(at);
        if self.state != State::Idle && !resting {
            return None;
        }
        let Some((at0, cpu0)) = self.poll_ref else {
            self.poll_ref = Some((at, cpu));
            return None;
        };
        let span = at.saturating_sub(at0);
        let min_span = if known.expected {
            Duration::ZERO
        } else {
            MIN_CPU_SPAN
        };
        let used = cpu.saturating_sub(cpu0);
        self.judged = Some(Judged {
            cpu: used,
            span,
            faults: 0,
            major_faults: 0,
            expected: known.expected,
            touched: None,
        });
        let above = cpu < cpu0 || cpu_above(used, span, min_span, &p.thresholds);
        let warm = !above && known.resident && self.rest.is_call(used, span);
        if above || warm {
            // With its pages in, CPU that says "call" is one only if it
            // touched as one (a counter that went back is a new context).
            if cpu >= cpu0 && known.resident {
                match self.confirm(at, ask) {
                    Some(true) => {}
                    // No call, and not its rest either.
                    Some(false) => {
                        self.poll_ref = Some((at, cpu));
                        return None;
                    }
                    // Asked too lately: judged with what comes next.
                    None => return None,
                }
            }
            if warm {
                self.poll_ref = Some((at, cpu));
                return Some(self.warm_call(at));
            }
            self.last_activity = at;
            self.touches.did_something();
            if resting {
                return Some(self.record_onset(at));
            }
            return Some(self.wake(at, p));
        }
        if learn && span >= min_span {
            if known.resident {
                self.rest.learn(used, span);
                self.touches.rest(at, ask);
            }
            self.poll_ref = Some((at, cpu));
        }
        None
    }

    /// The kernel holds a task of it waiting for memory at its limit (the
    /// v1 OOM wait): activity, whatever its CPU says (it uses none there).
    /// Idle, it woke; active and quiet, an onset.
    pub fn demand(&mut self, at: Instant, p: &ModelParams) -> Option<Transition> {
        let resting = self.state == State::Active && self.is_quiet(at);
        self.last_activity = at;
        self.judged = None; // no reading: the kernel's word
        match self.state {
            State::Idle => Some(self.wake(at, p)),
            State::Active if resting => Some(self.record_onset(at)),
            _ => None,
        }
    }
}
