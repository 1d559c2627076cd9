//! The per-context state machine: active → idle → waking → active.
//!
//! A context starts active (memext knows nothing yet and must not push out
//! what may be in use). It becomes idle after `idle_after` without activity,
//! wakes on the first activity seen while idle, and is active again once it
//! has stayed awake for `settle`. Every wake is recorded in its history.
//!
//! Without accessed-bit tracking (absent on many kernels), a process that
//! keeps touching memory it has mapped, with little CPU, looks idle. When such
//! a context wakes sooner after becoming idle than it took to be judged idle,
//! that idle was false: its idle threshold doubles (up to 16×), and halves
//! again after each idle period that lasted at least the threshold.

use std::time::Duration;

use crate::activity::{cpu_above, is_active, ActivityThresholds, Counters, MIN_CPU_SPAN};
use crate::history::ActivationHistory;
use crate::Instant;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    Active,
    Idle,
    Waking,
}

impl std::fmt::Display for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            State::Active => "active",
            State::Idle => "idle",
            State::Waking => "waking",
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct ModelParams {
    pub idle_after: Duration,
    pub settle: Duration,
    pub thresholds: ActivityThresholds,
}

impl Default for ModelParams {
    fn default() -> Self {
        Self {
            idle_after: Duration::from_secs(30),
            settle: Duration::from_secs(2),
            thresholds: ActivityThresholds::default(),
        }
    }
}

/// A change of state worth acting on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Transition {
    BecameIdle,
    Woke,
    Settled,
}

impl Transition {
    /// The name events carry (`became-idle`, `woke`, `settled`).
    pub fn name(self) -> &'static str {
        match self {
            Transition::BecameIdle => "became-idle",
            Transition::Woke => "woke",
            Transition::Settled => "settled",
        }
    }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ContextModel {
    pub state: State,
    /// When the current state began.
    pub since: Instant,
    pub last_activity: Instant,
    #[serde(skip)]
    last: Option<Counters>,
    /// The CPU time between-ticks polls are judged against (when, how much):
    /// the last tick's, moved on by polls at most every `MIN_CPU_SPAN`.
    #[serde(skip)]
    poll_ref: Option<(Instant, Duration)>,
    pub history: ActivationHistory,
    /// Multiplier of `idle_after` learned from false idles (1, 2, 4, … 16).
    pub idle_scale: u32,
}

/// The largest multiplier of `idle_after` a context can learn.
pub const MAX_IDLE_SCALE: u32 = 16;

impl ContextModel {
    pub fn new(now: Instant) -> Self {
        Self {
            state: State::Active,
            since: now,
            last_activity: now,
            last: None,
            poll_ref: None,
            history: ActivationHistory::default(),
            idle_scale: 1,
        }
    }

    /// The idle threshold in force for this context.
    pub fn idle_after(&self, p: &ModelParams) -> Duration {
        p.idle_after * self.idle_scale
    }

    /// A waking context that waited (frozen) for room runs from now: the
    /// time it takes to settle counts from here, not from its wake.
    pub fn admitted(&mut self, now: Instant) {
        if self.state == State::Waking {
            self.since = now;
        }
    }

    /// Takes one sample; returns the transition it caused, if any.
    pub fn observe(&mut self, c: Counters, p: &ModelParams) -> Option<Transition> {
        let active = self
            .last
            .as_ref()
            .is_some_and(|l| is_active(l, &c, &p.thresholds));
        self.last = Some(c);
        self.poll_ref = Some((c.at, c.cpu));
        if active {
            self.last_activity = c.at;
        }
        let now = c.at;
        let (next, event) = match self.state {
            State::Active
                if !active && now.saturating_sub(self.last_activity) >= self.idle_after(p) =>
            {
                (State::Idle, Transition::BecameIdle)
            }
            State::Idle if active => return Some(self.wake(now, p)),
            State::Waking if now.saturating_sub(self.since) >= p.settle => {
                (State::Active, Transition::Settled)
            }
            _ => return None,
        };
        self.state = next;
        self.since = now;
        Some(event)
    }

    /// A between-ticks reading of an idle context's CPU time (`cpu` at
    /// `at`): whether it woke. Judged against the last tick's reading or a
    /// later poll's, over at least `MIN_CPU_SPAN` (see there: a sleeping
    /// runtime's housekeeping is no wake); the tick's own reference is left
    /// alone, so the next tick still judges its whole interval.
    ///
    /// `expected`: a wake is due (the context is held in DRAM, mapped back,
    /// for a predicted one). Such a wake takes no fault and a few ms of CPU,
    /// so it is judged over the poll's own window, as it comes; a false one
    /// costs no read-back there, only an early entry in the history.
    pub fn poll(
        &mut self,
        at: Instant,
        cpu: Duration,
        p: &ModelParams,
        expected: bool,
    ) -> Option<Transition> {
        if self.state != State::Idle {
            return None;
        }
        let Some((at0, cpu0)) = self.poll_ref else {
            self.poll_ref = Some((at, cpu));
            return None;
        };
        let span = at.saturating_sub(at0);
        let min_span = if expected {
            Duration::ZERO
        } else {
            MIN_CPU_SPAN
        };
        if cpu < cpu0 || cpu_above(cpu - cpu0, span, min_span, &p.thresholds) {
            self.last_activity = at;
            return Some(self.wake(at, p));
        }
        if span >= min_span {
            self.poll_ref = Some((at, cpu));
        }
        None
    }

    /// Idle → waking: the wake is recorded, and an idle that ended sooner
    /// than it took to judge doubles the idle threshold.
    fn wake(&mut self, now: Instant, p: &ModelParams) -> Transition {
        self.history.record(now);
        let slept = now.saturating_sub(self.since);
        if slept < self.idle_after(p) {
            self.idle_scale = (self.idle_scale * 2).min(MAX_IDLE_SCALE);
        } else {
            self.idle_scale = (self.idle_scale / 2).max(1);
        }
        self.state = State::Waking;
        self.since = now;
        Transition::Woke
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A trace: (seconds, cpu ms so far).
    fn run(
        model: &mut ContextModel,
        p: &ModelParams,
        trace: &[(f64, u64)],
    ) -> Vec<(f64, Transition)> {
        trace
            .iter()
            .filter_map(|&(t, cpu)| {
                let c = Counters {
                    at: Duration::from_secs_f64(t),
                    cpu: Duration::from_millis(cpu),
                    ..Default::default()
                };
                model.observe(c, p).map(|e| (t, e))
            })
            .collect()
    }

    #[test]
    fn sleeps_then_wakes_then_settles() {
        let p = ModelParams {
            idle_after: Duration::from_secs(10),
            ..Default::default()
        };
        let mut m = ContextModel::new(Duration::ZERO);
        // Busy for 5 s (500 ms CPU per second), then quiet, then busy again at 30 s.
        let mut trace = vec![];
        let mut cpu = 0;
        for i in 0..=40 {
            let t = f64::from(i);
            if !(6..30).contains(&i) {
                cpu += 500;
            }
            trace.push((t, cpu));
        }
        let events = run(&mut m, &p, &trace);
        assert_eq!(
            events,
            vec![
                (15.0, Transition::BecameIdle),
                (30.0, Transition::Woke),
                (32.0, Transition::Settled)
            ]
        );
        assert_eq!(m.history.last(), Some(Duration::from_secs(30)));
        assert_eq!(m.state, State::Active);
    }

    #[test]
    fn false_idles_lengthen_the_threshold_and_true_ones_shorten_it() {
        let p = ModelParams {
            idle_after: Duration::from_secs(3),
            settle: Duration::from_secs(1),
            ..Default::default()
        };
        let mut m = ContextModel::new(Duration::ZERO);
        let mut cpu = 0;
        let mut trace = Vec::new();
        for i in 0..=60 {
            if [10, 15, 40].contains(&i) {
                cpu += 500;
            }
            trace.push((f64::from(i), cpu));
        }
        let events = run(&mut m, &p, &trace);
        // Idle at 3, woke at 10 (slept 7 >= 3: true idle, scale stays 1);
        // settled 11, idle at 13, woke at 15 (slept 2 < 3: false, scale 2);
        // settled 16, now idle needs 6 s: at 21; woke at 40 (slept 19 >= 6:
        // true, scale back to 1); settled 41, idle again at 43.
        let idle_at: Vec<f64> = events
            .iter()
            .filter(|e| e.1 == Transition::BecameIdle)
            .map(|e| e.0)
            .collect();
        assert_eq!(idle_at, vec![3.0, 13.0, 21.0, 43.0]);
        assert_eq!(m.idle_scale, 1);
    }

    #[test]
    fn a_fresh_context_is_active_until_proven_idle() {
        let p = ModelParams {
            idle_after: Duration::from_secs(10),
            ..Default::default()
        };
        let mut m = ContextModel::new(Duration::ZERO);
        let events = run(&mut m, &p, &[(0.0, 0), (5.0, 0), (9.9, 0)]);
        assert!(events.is_empty());
        assert_eq!(m.state, State::Active);
        assert_eq!(
            run(&mut m, &p, &[(10.0, 0)]),
            vec![(10.0, Transition::BecameIdle)]
        );
    }

    #[test]
    fn wake_is_seen_on_the_first_active_sample() {
        let p = ModelParams {
            idle_after: Duration::from_secs(1),
            ..Default::default()
        };
        let mut m = ContextModel::new(Duration::ZERO);
        run(&mut m, &p, &[(0.0, 0), (1.0, 0)]);
        assert_eq!(m.state, State::Idle);
        // Sampled every 20 ms: 6 ms of CPU in 20 ms is activity at once.
        assert_eq!(
            run(&mut m, &p, &[(1.02, 0), (1.04, 6)]),
            vec![(1.04, Transition::Woke)]
        );
    }

    /// Between ticks: a runtime's housekeeping (1 ms of CPU every 0.5 s,
    /// read every 20 ms) is no wake; 6 ms of CPU is, at the poll that sees
    /// it; the tick after a poll still judges its whole interval.
    #[test]
    fn polls_judge_cpu_over_a_quarter_second_at_least() {
        let p = ModelParams {
            idle_after: Duration::from_secs(1),
            ..Default::default()
        };
        let ms = Duration::from_millis;
        let mut m = ContextModel::new(Duration::ZERO);
        run(&mut m, &p, &[(0.0, 0), (1.0, 0)]);
        assert_eq!(m.state, State::Idle);
        let mut cpu = 0;
        for k in 1..=100u64 {
            if k % 25 == 0 {
                cpu += 1; // one housekeeping run every 0.5 s
            }
            let at = Duration::from_secs(1) + ms(20 * k);
            assert_eq!(m.poll(at, ms(cpu), &p, false), None, "poll {k}");
        }
        // The tick at 3 s: 4 ms of CPU over 2 s, no wake either.
        assert!(run(&mut m, &p, &[(3.0, cpu)]).is_empty());
        assert_eq!(m.poll(ms(3020), ms(cpu + 3), &p, false), None);
        assert_eq!(
            m.poll(ms(3040), ms(cpu + 6), &p, false),
            Some(Transition::Woke),
            "6 ms of CPU within 40 ms"
        );
        assert_eq!(m.state, State::Waking);
        // Held for a predicted wake: 2 ms of CPU within a 20 ms poll is it.
        let mut h = ContextModel::new(Duration::ZERO);
        run(&mut h, &p, &[(0.0, 0), (1.0, 0)]);
        assert_eq!(h.poll(ms(1020), ms(0), &p, true), None);
        assert_eq!(h.poll(ms(1040), ms(2), &p, true), Some(Transition::Woke));
    }
}
