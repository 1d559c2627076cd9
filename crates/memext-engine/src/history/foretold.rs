//! Calls known ahead: an analysis setting, not a prediction. Told every
//! call a context will get (bench/faas knows its trace), the history's two
//! answers, when the next wake is due and how long until it is expected,
//! come from those calls instead of from the wakes seen; everything else
//! the engine does (its keep order, push-outs, read-backs, pacing) is as
//! without. A run so tells how much of a gap is the prediction's and how
//! much the mechanism's and the host's: the engine with perfect foresight.

use std::time::Duration;

use crate::Instant;

/// A call stays the next one this long after it was due: its wake is seen
/// a few ms to a tick after it comes, and the hold for it must not end
/// before.
pub const STANDS_AFTER: Duration = Duration::from_secs(1);

/// The period given for the last call known (none after it).
const LAST_PERIOD: Duration = Duration::from_secs(3600);

/// A wake seen this long before a call is taken for it (the clocks of the
/// caller and the daemon agree to a few ms; a call is seen after it came).
const SEEN_BEFORE: Duration = Duration::from_millis(500);

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Foretold {
    /// The calls, in order.
    calls: Vec<Instant>,
}

impl Foretold {
    pub fn new(mut calls: Vec<Instant>) -> Self {
        calls.sort();
        calls.dedup();
        Self { calls }
    }

    /// The next call at `now` (one due less than `STANDS_AFTER` ago still
    /// is) and the time from it to the one after, as a period: `is_due`
    /// then holds from `lead` before the call until it has come. None
    /// once every call has come.
    pub fn next_and_period(&self, now: Instant) -> Option<(Instant, Duration)> {
        let i = self.calls.partition_point(|&c| c + STANDS_AFTER <= now);
        let next = *self.calls.get(i)?;
        let period = self
            .calls
            .get(i + 1)
            .map_or(LAST_PERIOD, |&after| after - next)
            // `is_due` holds until half a period past the call: no longer
            // than the call stands.
            .min(2 * STANDS_AFTER);
        Some((next, period))
    }

    /// Whether a wake seen at `now` is one of the calls: from `SEEN_BEFORE`
    /// before one until `STANDS_AFTER` after it. Else it is the context's
    /// own activity (a runtime's timer, its pages read back), and a hold for
    /// the next call stands (`ActivationHistory::awaits_call`).
    pub fn is_a_call(&self, now: Instant) -> bool {
        let i = self.calls.partition_point(|&c| c + STANDS_AFTER < now);
        self.calls.get(i).is_some_and(|&c| c <= now + SEEN_BEFORE)
    }

    /// How long until the next call at `now`; with none to come, a long time.
    pub fn expected_wake_in(&self, now: Instant) -> Duration {
        self.next_and_period(now)
            .map_or(LAST_PERIOD, |(next, _)| next.saturating_sub(now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::ActivationHistory;
    use crate::predict::is_due;

    fn at(s: f64) -> Instant {
        Duration::from_secs_f64(s)
    }

    #[test]
    fn each_call_is_due_from_the_lead_before_it_until_it_has_come() {
        let mut h = ActivationHistory::default();
        // Wakes that make a 10 s schedule: the calls told stand instead.
        for t in [0.0, 10.0, 20.0] {
            h.record(at(t));
        }
        h.foretell(Foretold::new(vec![at(37.0), at(25.0)]));
        let lead = Duration::from_secs(3);
        let due = |t: f64| is_due(&h, at(t), lead);
        assert!(!due(21.0), "not at the schedule's 30 s");
        assert!(due(22.5) && due(25.5), "25 s: from 22 s until it has come");
        assert!(
            !due(26.5) && !due(30.0),
            "the schedule's 30 s is not a call"
        );
        assert!(due(34.5) && due(37.9));
        assert!(!due(38.5), "every call has come");
        assert_eq!(h.expected_wake_in(at(30.0), at(0.0)), Some(at(7.0)));
        assert_eq!(
            h.expected_wake_in(at(40.0), at(0.0)),
            Some(LAST_PERIOD),
            "none to come: last in the keep order"
        );
        assert!(
            h.awaits_call(at(23.0)),
            "activity 2 s before a call is not it"
        );
        assert!(
            !h.awaits_call(at(24.8)) && !h.awaits_call(at(25.9)),
            "the call"
        );
        assert!(h.awaits_call(at(26.5)), "after it");
    }
}
