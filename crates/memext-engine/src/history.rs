//! Activation history of a context, and the two predictions made from it:
//! a context that wakes periodically will wake again one period after its last
//! wake; a context that usually wakes right after another one will wake when
//! that one does.

use std::collections::VecDeque;
use std::time::Duration;

use crate::Instant;

/// How many wakes are remembered.
const KEEP: usize = 32;
/// Intervals needed before a period is believed: two (three calls) within
/// `PERIOD_TOLERANCE` of each other. Of a Poisson process's, about one pair
/// in nine passes (a read-back for nothing); a timer's fourth call is warm
/// instead of its fifth (bench/faas: periods of 7.5-30 s in a 180 s trace).
const MIN_INTERVALS: usize = 2;
/// How far each recent interval may stray from their median.
const PERIOD_TOLERANCE: f64 = 0.2;

#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ActivationHistory {
    wakes: VecDeque<Instant>,
}

impl ActivationHistory {
    pub fn record(&mut self, at: Instant) {
        if self.wakes.back().is_some_and(|&l| at <= l) {
            return; // time never goes back; a duplicate is ignored
        }
        if self.wakes.len() == KEEP {
            self.wakes.pop_front();
        }
        self.wakes.push_back(at);
    }

    pub fn last(&self) -> Option<Instant> {
        self.wakes.back().copied()
    }

    pub fn count(&self) -> usize {
        self.wakes.len()
    }

    pub fn wakes(&self) -> impl Iterator<Item = Instant> + '_ {
        self.wakes.iter().copied()
    }

    /// The period of a context that wakes regularly: the median of the last
    /// (up to 8) intervals, if every one of them is within 20% of it.
    pub fn period(&self) -> Option<Duration> {
        let n = self.wakes.len();
        if n < MIN_INTERVALS + 1 {
            return None;
        }
        let from = n.saturating_sub(9);
        let mut iv: Vec<Duration> = self
            .wakes
            .iter()
            .skip(from)
            .zip(self.wakes.iter().skip(from + 1))
            .map(|(a, b)| *b - *a)
            .collect();
        iv.sort();
        let median = iv[iv.len() / 2];
        if median.is_zero() {
            return None;
        }
        let m = median.as_secs_f64();
        iv.iter()
            .all(|d| (d.as_secs_f64() - m).abs() <= PERIOD_TOLERANCE * m)
            .then_some(median)
    }

    /// When the next wake is expected, for a periodic context.
    pub fn next_wake(&self) -> Option<Instant> {
        Some(self.last()? + self.period()?)
    }

    /// Whether a wake at `at` is the one a periodic history predicts: within
    /// the period's tolerance of when it was due.
    pub fn is_on_schedule(&self, at: Instant) -> bool {
        let (Some(next), Some(period)) = (self.next_wake(), self.period()) else {
            return false;
        };
        let off = at.abs_diff(next);
        off.as_secs_f64() <= PERIOD_TOLERANCE * period.as_secs_f64()
    }

    /// How long until the next wake is to be expected at `now`: until it is
    /// due for a periodic context (zero once overdue, up to half a period
    /// late). Else a memoryless
    /// guess from its rate over the time it has been watched (since
    /// `watched_since`, or its oldest remembered wake): that time over its
    /// wakes, and never less than it has already waited since its last
    /// one, so that a context called once stands behind one called every
    /// few seconds, and one that stopped falls behind. None without wakes.
    pub fn expected_wake_in(&self, now: Instant, watched_since: Instant) -> Option<Duration> {
        // Overdue by more than half a period, the period failed (or was a
        // chance match of two intervals): the rate speaks instead, so that
        // it is not kept first for good.
        if let (Some(next), Some(period)) = (self.next_wake(), self.period()) {
            if now <= next + period / 2 {
                return Some(next.saturating_sub(now));
            }
        }
        let (oldest, last) = (*self.wakes.front()?, self.last()?);
        let from = if self.wakes.len() < KEEP {
            watched_since.min(oldest)
        } else {
            oldest
        };
        let wakes = u32::try_from(self.wakes.len()).ok()?;
        let mean = now.saturating_sub(from) / wakes;
        Some(mean.max(now.saturating_sub(last)))
    }
}

/// The share of `leader`'s wakes (among those `follower` could have followed)
/// that `follower` followed within `window`. `None` until there are at least
/// three such wakes of the leader.
pub fn follow_ratio(
    leader: &ActivationHistory,
    follower: &ActivationHistory,
    window: Duration,
) -> Option<f64> {
    let first = follower.wakes.front().copied()?;
    let candidates: Vec<Instant> = leader.wakes().filter(|&w| w + window >= first).collect();
    if candidates.len() < 3 {
        return None;
    }
    let followed = candidates
        .iter()
        .filter(|&&w| follower.wakes().any(|f| f >= w && f <= w + window))
        .count();
    Some(followed as f64 / candidates.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: f64) -> Instant {
        Duration::from_secs_f64(s)
    }

    fn hist(times: &[f64]) -> ActivationHistory {
        let mut h = ActivationHistory::default();
        for &t in times {
            h.record(at(t));
        }
        h
    }

    #[test]
    fn periodic_wakes_predict_the_next() {
        let h = hist(&[10.0, 40.2, 69.9, 100.1, 130.0]);
        let p = h.period().expect("periodic");
        assert!((p.as_secs_f64() - 30.0).abs() < 0.5, "{p:?}");
        let next = h.next_wake().expect("next");
        assert!((next.as_secs_f64() - 160.0).abs() < 0.5);
    }

    #[test]
    fn the_next_wake_is_expected_when_due_or_from_the_rate() {
        let periodic = hist(&[10.0, 40.0, 70.0, 100.0, 130.0]);
        assert_eq!(
            periodic.expected_wake_in(at(150.0), at(0.0)),
            Some(at(10.0))
        );
        assert_eq!(
            periodic.expected_wake_in(at(170.0), at(0.0)),
            Some(at(0.0)),
            "overdue"
        );
        // More than half a period late (16 s on 30): five wakes in 176 s,
        // 35.2 s each, but never sooner than the 46 s it has already waited.
        assert_eq!(
            periodic.expected_wake_in(at(176.0), at(0.0)),
            Some(at(46.0))
        );
        // Five wakes in the 100 s watched: one every 20 s.
        let irregular = hist(&[0.0, 30.0, 35.0, 90.0, 91.0]);
        assert_eq!(
            irregular.expected_wake_in(at(100.0), at(0.0)),
            Some(at(20.0))
        );
        // Silent since: never sooner than it has already waited.
        assert_eq!(
            irregular.expected_wake_in(at(200.0), at(0.0)),
            Some(at(109.0))
        );
        // Called once in 100 s, just now: behind one called every 5 s.
        let once = hist(&[99.0]).expected_wake_in(at(100.0), at(0.0));
        let often = hist(&[80.0, 85.0, 90.0, 91.0, 99.0]).expected_wake_in(at(100.0), at(75.0));
        assert_eq!(once, Some(at(100.0)));
        assert_eq!(often, Some(at(5.0)));
        assert_eq!(hist(&[]).expected_wake_in(at(9.0), at(0.0)), None);
    }

    #[test]
    fn irregular_or_too_few_wakes_predict_nothing() {
        assert_eq!(hist(&[0.0, 30.0]).period(), None, "one interval");
        assert_eq!(hist(&[0.0, 30.0, 45.0]).period(), None, "two apart");
        assert_eq!(
            hist(&[0.0, 30.0, 60.5]).period(),
            Some(at(30.5)),
            "two alike"
        );
        assert_eq!(hist(&[0.0, 30.0, 35.0, 90.0, 91.0]).period(), None);
    }

    #[test]
    fn history_is_bounded_and_ignores_time_going_back() {
        let mut h = ActivationHistory::default();
        for i in 0..100u64 {
            h.record(Duration::from_secs(i));
        }
        h.record(Duration::from_secs(5));
        assert_eq!(h.count(), KEEP);
        assert_eq!(h.last(), Some(Duration::from_secs(99)));
    }

    #[test]
    fn follower_of_a_leader() {
        let leader = hist(&[10.0, 50.0, 90.0, 130.0]);
        let follower = hist(&[10.4, 50.3, 90.6, 130.2]);
        let stranger = hist(&[20.0, 70.0, 100.0, 140.0]);
        let w = Duration::from_secs(1);
        assert_eq!(follow_ratio(&leader, &follower, w), Some(1.0));
        assert_eq!(follow_ratio(&leader, &stranger, w), Some(0.0));
        assert_eq!(follow_ratio(&leader, &hist(&[]), w), None);
    }
}
