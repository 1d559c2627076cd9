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

use std::time::Duration;

use crate::planner::GROWTH_BYTES;
use crate::Instant;

/// Readings it must have been judged over before its margin is its own.
pub const LEARNED: Duration = Duration::from_secs(20);
/// The smallest margin: a few allocations between two readings.
pub const MIN_MARGIN: u64 = 4 << 20;
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
        if self.judged < LEARNED {
            return GROWTH_BYTES;
        }
        self.peak.saturating_mul(2).clamp(MIN_MARGIN, GROWTH_BYTES)
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
