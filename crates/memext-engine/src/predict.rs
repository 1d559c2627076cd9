//! Which contexts to bring back now, and why: a context that is waking (or
//! active again after a quiet stretch: an onset); an idle or quiet context
//! whose periodic wake is due within the lead time; an idle or quiet context
//! that usually wakes right after a context that has just woken.

use std::time::Duration;

use crate::history::{following, ActivationHistory};
use crate::model::{ContextModel, State};
use crate::Instant;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PrefetchReason {
    /// The context woke.
    Woke,
    /// Its periodic wake is due.
    Periodic,
    /// A context it usually follows has woken.
    FollowsLeader,
    /// DRAM was free beyond the reserve on a host meant to be full: read
    /// back ahead of its next call, the most valuable first (the planner's,
    /// never a prediction's).
    Refill,
}

impl std::fmt::Display for PrefetchReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PrefetchReason::Woke => "woke",
            PrefetchReason::Periodic => "periodic",
            PrefetchReason::FollowsLeader => "follows-leader",
            PrefetchReason::Refill => "refill",
        })
    }
}

/// How long after an onset it is served: less than a tick.
const ONSET_SERVED: Duration = Duration::from_millis(500);

#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct PredictParams {
    /// How long before a predicted wake to start bringing a context back.
    pub lead: Duration,
    /// A follower wakes within this long after its leader.
    pub follow_window: Duration,
    /// Share of the leader's wakes the follower must have followed.
    pub follow_ratio: f64,
    /// ... and how unlikely following that often must be by chance alone,
    /// at the follower's own rate (`Following::by_chance`).
    pub follow_chance: f64,
}

impl Default for PredictParams {
    fn default() -> Self {
        Self {
            lead: Duration::from_secs(3),
            follow_window: Duration::from_secs(2),
            follow_ratio: 0.6,
            follow_chance: 1e-3,
        }
    }
}

/// The prefetch decision for each context, by index into `models`.
pub fn decide(
    now: Instant,
    models: &[&ContextModel],
    p: &PredictParams,
) -> Vec<Option<PrefetchReason>> {
    let leaders: Vec<usize> = models
        .iter()
        .enumerate()
        .filter(|(_, m)| {
            m.state != State::Idle
                && m.history
                    .last()
                    .is_some_and(|w| now.saturating_sub(w) <= p.follow_window)
        })
        .map(|(i, _)| i)
        .collect();
    models
        .iter()
        .enumerate()
        .map(|(i, m)| match m.state {
            State::Waking => Some(PrefetchReason::Woke),
            // An onset is a wake that came before the context was judged
            // idle: served at the tick that saw it, so that its pages are
            // read back once, not at each tick of a longer window.
            State::Active if m.had_onset(now, ONSET_SERVED) => Some(PrefetchReason::Woke),
            // Quiet, an active context is predicted like an idle one (what
            // memext paged out of it for room comes back before its call).
            State::Active if !m.is_quiet(now) => None,
            State::Active | State::Idle => {
                if is_due(&m.history, now, p.lead) {
                    return Some(PrefetchReason::Periodic);
                }
                // Calls known ahead (`Foretold`) leave nothing to guess.
                let follows = !m.history.is_foretold()
                    && leaders.iter().any(|&l| {
                        l != i
                            && following(&models[l].history, &m.history, p.follow_window, now)
                                .is_some_and(|f| {
                                    f.ratio() >= p.follow_ratio && f.by_chance() <= p.follow_chance
                                })
                    });
                follows.then_some(PrefetchReason::FollowsLeader)
            }
        })
        .collect()
}

/// Whether a periodic history has its next wake due at `now`: within
/// `lead` of it, or overdue by less than half a period (past calls that
/// went unseen: `ActivationHistory::expected_call`).
pub fn is_due(history: &ActivationHistory, now: Instant, lead: Duration) -> bool {
    history
        .expected_call(now)
        .is_some_and(|(next, period)| now + lead >= next && now <= next + period / 2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::activity::Counters;
    use crate::model::ModelParams;

    /// Drives a model through wakes at `wakes` (seconds), busy for 1 s each,
    /// sampled every 100 ms up to `until`.
    fn model_with_wakes(wakes: &[f64], until: f64) -> ContextModel {
        let p = ModelParams {
            idle_after: Duration::from_secs(2),
            settle: Duration::from_millis(500),
            ..Default::default()
        };
        let mut m = ContextModel::new(Duration::ZERO);
        let mut cpu = Duration::ZERO;
        let mut t = 0.0;
        while t <= until + 1e-9 {
            if wakes.iter().any(|&w| t >= w && t < w + 1.0) {
                cpu += Duration::from_millis(50);
            }
            m.observe(
                Counters {
                    at: Duration::from_secs_f64(t),
                    cpu,
                    ..Default::default()
                },
                &p,
            );
            t += 0.1;
        }
        m
    }

    #[test]
    fn periodic_context_is_brought_back_before_its_wake() {
        let m = model_with_wakes(&[5.0, 35.0, 65.0, 95.0, 125.0], 150.0);
        assert_eq!(m.state, State::Idle);
        let p = PredictParams::default();
        // Next wake expected at ~155 s: nothing at 150, prefetch from 152.
        assert_eq!(decide(Duration::from_secs(150), &[&m], &p), vec![None]);
        assert_eq!(
            decide(Duration::from_secs(153), &[&m], &p),
            vec![Some(PrefetchReason::Periodic)]
        );
    }

    /// Called twice, 30 s apart: its third call is read back ahead of it.
    #[test]
    fn a_context_called_twice_is_brought_back_before_its_third_call() {
        let m = model_with_wakes(&[5.0, 35.0], 60.0);
        assert_eq!(m.state, State::Idle);
        let p = PredictParams::default();
        assert_eq!(decide(Duration::from_secs(60), &[&m], &p), vec![None]);
        assert_eq!(
            decide(Duration::from_secs(63), &[&m], &p),
            vec![Some(PrefetchReason::Periodic)]
        );
    }

    #[test]
    fn follower_is_brought_back_when_its_leader_wakes() {
        let leader_wakes = [5.0, 20.0, 45.0, 65.0];
        let follower_wakes = [5.5, 20.5, 45.5]; // not periodic
                                                // At 65.05 s the leader has just woken; the follower has not yet.
        let leader = model_with_wakes(&leader_wakes, 65.1);
        let follower = model_with_wakes(&follower_wakes, 65.1);
        let loner = model_with_wakes(&[15.0], 65.1);
        assert_eq!(leader.state, State::Waking);
        assert_eq!(follower.state, State::Idle);
        let d = decide(
            Duration::from_secs_f64(65.1),
            &[&leader, &follower, &loner],
            &PredictParams::default(),
        );
        assert_eq!(
            d,
            vec![
                Some(PrefetchReason::Woke),
                Some(PrefetchReason::FollowsLeader),
                None
            ]
        );
    }

    /// With its calls known ahead, a follower is not guessed at: it is due
    /// only before a call it will get.
    #[test]
    fn a_follower_told_its_calls_is_due_only_before_them() {
        use crate::history::Foretold;
        let leader = model_with_wakes(&[5.0, 20.0, 45.0, 65.0], 65.1);
        let mut follower = model_with_wakes(&[5.5, 20.5, 45.5], 65.1);
        follower
            .history
            .foretell(Foretold::new(vec![Duration::from_secs(90)]));
        let p = PredictParams::default();
        let d = decide(Duration::from_secs_f64(65.1), &[&leader, &follower], &p);
        assert_eq!(d, vec![Some(PrefetchReason::Woke), None]);
        let d = decide(Duration::from_secs_f64(88.0), &[&leader, &follower], &p);
        assert_eq!(d[1], Some(PrefetchReason::Periodic));
    }

    /// A function called every 8 s, never judged idle (30 s): its calls are
    /// onsets; right after one it is brought back like a waking context,
    /// and, quiet, before its next call like a periodic idle one.
    #[test]
    fn a_quiet_active_context_is_predicted_from_its_onsets() {
        let p = ModelParams {
            idle_after: Duration::from_secs(30),
            ..Default::default()
        };
        let mut m = ContextModel::new(Duration::ZERO);
        let mut cpu = Duration::ZERO;
        for k in 0..=340u32 {
            let t = f64::from(k) / 10.0;
            if [4.0, 12.0, 20.0, 28.0]
                .iter()
                .any(|&c| t > c && t <= c + 0.3)
            {
                cpu += Duration::from_millis(50);
            }
            let c = Counters {
                at: Duration::from_secs_f64(t),
                cpu,
                ..Default::default()
            };
            m.observe(c, &p);
        }
        assert_eq!(m.state, State::Active);
        assert_eq!(m.history.period(), Some(Duration::from_secs(8)));
        let at = |s: f64| decide(Duration::from_secs_f64(s), &[&m], &PredictParams::default());
        assert_eq!(at(28.2), vec![Some(PrefetchReason::Woke)], "its onset");
        assert_eq!(at(29.0), vec![None], "served once, at the tick that saw it");
        assert_eq!(at(31.5), vec![None], "quiet, its call 4.5 s away");
        assert_eq!(at(33.5), vec![Some(PrefetchReason::Periodic)]);
    }

    #[test]
    fn active_contexts_are_left_alone() {
        let m = model_with_wakes(&[0.0], 0.5);
        assert_eq!(m.state, State::Active);
        assert_eq!(
            decide(Duration::from_secs(1), &[&m], &PredictParams::default()),
            vec![None]
        );
    }
}
