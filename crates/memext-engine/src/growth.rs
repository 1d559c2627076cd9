//! How fast a context's memory grows between two readings, learned: the
//! margin the plan gives a running context above what it has.
//!
//! The margin was a flat 32 MiB (`planner::GROWTH_BYTES`) for every busy or
//! woken extend context. On bench/faas' host, where functions do not grow
//! (a call reads its heap; measured: no charge, no fault), about three busy
//! and two woken functions held 91-106 MiB of such margins at any time,
//! uncharged, while other functions' calls waited on read-backs. A context
//! that grows gets a margin of twice the most it grew between two readings;
//! one not read long enough yet, the flat margin.
//!
//! A reading counts only where the growth is the context's own: none of
//! its pages moving (memext's read-back charges it), no major faults (a
//! swap-in charges the page again while its swap slot is still counted).
//!
//! The same reading, taken only while a context rests (idle, or between two
//! calls), gives its slack: the room above what it holds that a resting
//! context keeps for its next call's first allocations, until its onset is
//! served. It was a flat 2 MiB (`planner::REST_SLACK_BYTES`) for every
//! resting function, about 80 of them on bench/faas' host: 110-112 MiB of
//! the plan (mean per sample) never charged, while calls waited on
//! read-backs. Measured there, a
//! warm call charged its function nothing (30 calls of a 40 MiB handler in
//! a cgroup of its own, usage before and after each: 0 B, max_usage
//! unchanged).

use std::time::Duration;

use crate::planner::{GROWTH_BYTES, REST_SLACK_BYTES};
use crate::Instant;

/// Readings it must have been judged over before its margin is its own.
pub const LEARNED: Duration = Duration::from_secs(20);
/// The smallest margin: a few allocations between two readings.
pub const MIN_MARGIN: u64 = 4 << 20;
/// The smallest slack: two of the kernel's per-CPU charge batches (64
/// pages each), so that a few allocations do not reclaim the context's own
/// pages at its limit.
pub const MIN_REST_SLACK: u64 = 512 << 10;
/// Beyond this much time judged, its peak counts half: a context that
/// stopped growing has its margin shrink again.
pub const FORGET_AFTER: Duration = Duration::from_secs(120);

/// The largest growth of its usage seen between two readings that counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Growth {
    last: Option<(Instant, u64)>,
    judged: Duration,
    peak: u64,
}

impl Growth {
    /// A reading of its usage at `at`. `own`: nothing but the context moved
    /// its memory since the last reading (no read-back, no major fault).
    pub fn observe(&mut self, at: Instant, usage: u64, own: bool) {
        if let Some((t0, u0)) = self.last.filter(|_| own) {
            self.peak = self.peak.max(usage.saturating_sub(u0));
            self.judged += at.saturating_sub(t0);
            if self.judged > FORGET_AFTER {
                self.judged /= 2;
                self.peak /= 2;
            }
        }
        self.last = Some((at, usage));
    }

    /// The margin above what it has: twice its peak growth, between
    /// `MIN_MARGIN` and `GROWTH_BYTES`; `GROWTH_BYTES` until learned.
    pub fn margin(&self) -> u64 {
        self.twice_peak_within(MIN_MARGIN, GROWTH_BYTES)
    }

    /// Of readings taken while it rests: the slack it keeps above what it
    /// holds, twice its peak growth between `MIN_REST_SLACK` and
    /// `REST_SLACK_BYTES`; `REST_SLACK_BYTES` until learned.
    pub fn rest_slack(&self) -> u64 {
        self.twice_peak_within(MIN_REST_SLACK, REST_SLACK_BYTES)
    }

    /// Twice the peak, between `lo` and `hi`; `hi` until learned.
    fn twice_peak_within(&self, lo: u64, hi: u64) -> u64 {
        if self.judged < LEARNED {
            return hi;
        }
        self.peak.saturating_mul(2).clamp(lo, hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn s(secs: u64) -> Instant {
        Duration::from_secs(secs)
    }

    #[test]
    fn a_context_that_does_not_grow_gets_the_smallest_margin_once_learned() {
        let mut g = Growth::default();
        for k in 0..=19 {
            g.observe(s(k), 60 * MIB, true);
        }
        assert_eq!(g.margin(), GROWTH_BYTES, "19 s judged");
        g.observe(s(20), 60 * MIB, true);
        assert_eq!(g.margin(), MIN_MARGIN);
    }

    #[test]
    fn a_growing_context_gets_twice_its_peak_growth() {
        let mut g = Growth::default();
        for k in 0..=20 {
            g.observe(s(k), (60 + 5 * (k % 2)) * MIB, true);
        }
        assert_eq!(g.margin(), 10 * MIB);
        // A 40 MiB jump: the flat margin is the most it gets.
        g.observe(s(21), 105 * MIB, true);
        assert_eq!(g.margin(), GROWTH_BYTES);
    }

    /// A read-back or a swap-in charges pages already counted in swap: such
    /// readings are not growth, and the next one is judged from them.
    #[test]
    fn readings_with_pages_moving_are_not_growth() {
        let mut g = Growth::default();
        for k in 0..=20 {
            g.observe(s(k), 20 * MIB, true);
        }
        g.observe(s(21), 70 * MIB, false);
        g.observe(s(22), 70 * MIB, true);
        assert_eq!(g.margin(), MIN_MARGIN);
    }

    #[test]
    fn a_resting_context_that_does_not_grow_keeps_the_smallest_slack() {
        let mut g = Growth::default();
        for k in 0..=19 {
            g.observe(s(k), 60 * MIB, true);
        }
        assert_eq!(g.rest_slack(), REST_SLACK_BYTES, "19 s judged");
        g.observe(s(20), 60 * MIB, true);
        assert_eq!(g.rest_slack(), MIN_REST_SLACK);
        // A call's first allocations, 384 KiB: twice that.
        g.observe(s(21), 60 * MIB + (384 << 10), true);
        assert_eq!(g.rest_slack(), 768 << 10);
        // More than the flat slack: the flat slack is the most it gets.
        g.observe(s(22), 70 * MIB, true);
        assert_eq!(g.rest_slack(), REST_SLACK_BYTES);
    }

    #[test]
    fn a_context_that_stopped_growing_has_its_margin_shrink() {
        let mut g = Growth::default();
        g.observe(s(0), 0, true);
        g.observe(s(1), 12 * MIB, true);
        for k in 2..=300 {
            g.observe(s(k), 12 * MIB, true);
        }
        assert_eq!(g.margin(), MIN_MARGIN, "{g:?}");
    }
}
