//! The per-context state machine: active → idle → waking → active.
//!
//! A context starts active (memext knows nothing yet and must not push out
//! what may be in use). It becomes idle after `idle_after` without activity,
//! wakes on the first activity seen while idle, and is active again once it
//! has stayed awake for `settle`. Every wake is recorded in its history.

use std::time::Duration;

use crate::activity::{is_active, ActivityThresholds, Counters};
use crate::history::ActivationHistory;
use crate::Instant;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    BecameIdle,
    Woke,
    Settled,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ContextModel {
    pub state: State,
    /// When the current state began.
    pub since: Instant,
    pub last_activity: Instant,
    #[serde(skip)]
    last: Option<Counters>,
    pub history: ActivationHistory,
}

impl ContextModel {
    pub fn new(now: Instant) -> Self {
        Self {
            state: State::Active,
            since: now,
            last_activity: now,
            last: None,
            history: ActivationHistory::default(),
        }
    }

    /// Takes one sample; returns the transition it caused, if any.
    pub fn observe(&mut self, c: Counters, p: &ModelParams) -> Option<Transition> {
        let active = self
            .last
            .as_ref()
            .is_some_and(|l| is_active(l, &c, &p.thresholds));
        self.last = Some(c);
        if active {
            self.last_activity = c.at;
        }
        let now = c.at;
        let (next, event) = match self.state {
            State::Active if !active && now.saturating_sub(self.last_activity) >= p.idle_after => {
                (State::Idle, Transition::BecameIdle)
            }
            State::Idle if active => {
                self.history.record(now);
                (State::Waking, Transition::Woke)
            }
            State::Waking if now.saturating_sub(self.since) >= p.settle => {
                (State::Active, Transition::Settled)
            }
            _ => return None,
        };
        self.state = next;
        self.since = now;
        Some(event)
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
        // Polled every 20 ms: 5 ms of CPU in 20 ms is activity at once.
        assert_eq!(
            run(&mut m, &p, &[(1.02, 0), (1.04, 5)]),
            vec![(1.04, Transition::Woke)]
        );
    }
}
