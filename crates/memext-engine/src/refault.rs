//! What a context does because memext took memory from it is not activity.
//!
//! A context at rest still runs a little: a server's event loop wakes every
//! half second, a runtime's timers fire. Those few pages are part of what a
//! push-out or a lowered limit takes; the next wake-up faults them back in,
//! from the tier, with the CPU that costs. Measured on this host (a bench/faas
//! function, 48 MiB heap, idle, its v1 limit written from 63 MiB to 4 MiB with
//! zram as swap): 70 major faults and 1-2 ms of CPU within 250 ms, then
//! nothing. 70 faults are above the activity threshold (`MIN_FAULTS`): the
//! engine took them for a call, recorded it in the history like one (a
//! timer's period broken for the rest of its history window), and read the
//! whole function back for it. In a bench/faas run 47 of 440 wakes and onsets
//! came with no call, 28 of them within 3 s after a lowering of that context.
//!
//! So for a short window after memext takes memory from a context, a budget
//! of faults and of CPU time is counted as memext's, as the mover's own
//! faults are: what a rest's housekeeping refaults stays under it; a call
//! (thousands of pages touched, tens of ms of CPU) goes through it at once.

use std::time::Duration;

use crate::Instant;

/// How long after memext took memory from a context its refaults are
/// counted as memext's.
pub const REFAULT_WINDOW: Duration = Duration::from_secs(2);
/// Faults (minor or major) counted as memext's within one window: 2 MiB of
/// pages, 7x what the measured housekeeping refaulted.
pub const REFAULT_FAULTS: u64 = 512;
/// CPU time counted as memext's within one window: 5x the measured.
pub const REFAULT_CPU: Duration = Duration::from_millis(10);

/// A context's refault window and what is left of its budget.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Refaults {
    /// The window ends then (None: no window open).
    until: Option<Instant>,
    faults_left: u64,
    cpu_left: Duration,
}

/// Of a sample's increments, the part that is memext's refaults.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Credit {
    pub faults: u64,
    pub majors: u64,
    pub cpu: Duration,
}

impl Refaults {
    /// memext took memory from the context at `now`: a fresh window and
    /// budget.
    pub fn open(&mut self, now: Instant) {
        *self = Refaults {
            until: Some(now + REFAULT_WINDOW),
            faults_left: REFAULT_FAULTS,
            cpu_left: REFAULT_CPU,
        };
    }

    /// memext is still taking memory from it at `now` (a lowering in the
    /// background): the window lasts, its budget does not grow.
    pub fn extend(&mut self, now: Instant) {
        if let Some(u) = self.until.as_mut() {
            *u = (*u).max(now + REFAULT_WINDOW);
        } else {
            self.open(now);
        }
    }

    /// Whether the window is open at `now`.
    pub fn is_open(&self, now: Instant) -> bool {
        self.until.is_some_and(|u| now <= u)
    }

    /// Of the increments seen at `now` (faults, major faults, CPU time since
    /// the last reading), the part the budget takes as memext's.
    pub fn credit(&mut self, now: Instant, faults: u64, majors: u64, cpu: Duration) -> Credit {
        if !self.is_open(now) {
            return Credit::default();
        }
        // (A major fault is counted among all faults too: the majors
        // credited are at most the faults credited.)
        let credited = faults.min(self.faults_left);
        let c = Credit {
            faults: credited,
            majors: majors.min(credited),
            cpu: cpu.min(self.cpu_left),
        };
        self.faults_left -= c.faults;
        self.cpu_left -= c.cpu;
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(secs: f64) -> Instant {
        Duration::from_secs_f64(secs)
    }

    #[test]
    fn nothing_is_credited_without_a_window() {
        let mut r = Refaults::default();
        assert_eq!(
            r.credit(s(1.0), 70, 70, Duration::from_millis(2)),
            Credit::default()
        );
    }

    #[test]
    fn housekeeping_refaults_are_taken_whole_a_call_goes_through() {
        let mut r = Refaults::default();
        r.open(s(10.0));
        let c = r.credit(s(10.25), 70, 70, Duration::from_millis(2));
        assert_eq!(
            (c.faults, c.majors, c.cpu),
            (70, 70, Duration::from_millis(2))
        );
        // A call in the same window: only the rest of the budget is taken.
        let c = r.credit(s(11.0), 12_000, 11_000, Duration::from_millis(80));
        assert_eq!(c.faults, REFAULT_FAULTS - 70);
        assert_eq!(c.cpu, REFAULT_CPU - Duration::from_millis(2));
        assert_eq!(
            r.credit(s(11.5), 100, 100, Duration::from_millis(1)).faults,
            0
        );
    }

    #[test]
    fn a_lowering_still_on_its_way_keeps_the_window_not_the_budget() {
        let mut r = Refaults::default();
        r.open(s(10.0));
        r.credit(s(10.5), 500, 500, Duration::ZERO);
        r.extend(s(11.5));
        assert!(r.is_open(s(13.0)));
        assert_eq!(
            r.credit(s(13.0), 100, 100, Duration::ZERO).faults,
            REFAULT_FAULTS - 500
        );
    }

    #[test]
    fn the_window_closes() {
        let mut r = Refaults::default();
        r.open(s(10.0));
        assert!(r.is_open(s(12.0)));
        assert_eq!(
            r.credit(s(12.1), 70, 70, Duration::from_millis(2)),
            Credit::default()
        );
    }
}
