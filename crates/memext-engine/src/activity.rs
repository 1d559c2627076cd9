//! Activity detection from two samples of a context's cheap counters. A
//! context is active when it used CPU or touched memory since the last sample.
//! memext's own work on a context (page-out, prefetch) runs in memext's process
//! and does not show up in these counters.

use std::time::Duration;

use crate::Instant;

/// The counters of one context at one instant.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Counters {
    pub at: Instant,
    /// CPU time used by the context since its start.
    pub cpu: Duration,
    pub pgfault: u64,
    pub pgmajfault: u64,
}

/// Thresholds above which a context counts as active over an interval.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct ActivityThresholds {
    /// Share of one CPU, e.g. 0.02 = 2%.
    pub cpu_share: f64,
    /// Page faults per second.
    pub faults_per_s: f64,
}

impl Default for ActivityThresholds {
    fn default() -> Self {
        Self {
            cpu_share: 0.02,
            faults_per_s: 50.0,
        }
    }
}

/// The shortest span CPU time is judged over, and the fewest faults that
/// count, whatever the interval. Between ticks a watched context's CPU is
/// read every few ms, and a wake's full sample may come ms after a tick;
/// over such a window a sleeping runtime's housekeeping is above any share.
/// Measured on a bench/faas function (Python's HTTP server in a container):
/// its select loop, pushed out, used ~1 ms of CPU every 0.5 s (5% of a CPU
/// over a 20 ms poll) and took 16 major of 45 faults once. Judged over at
/// least 250 ms a wake needs 5 ms of CPU, or more than 64 faults (256 KiB
/// touched), which the call that touched that function's heap passed within
/// its first ms.
pub const MIN_CPU_SPAN: Duration = Duration::from_millis(250);
pub const MIN_FAULTS: u64 = 64;

/// Whether the context did something between `before` and `after`.
/// Counters that went backwards (a restarted container) count as activity.
/// Faults count only when the context also ran: a fault it did not take on
/// its own CPU was taken by someone reading its memory (`ps` reading
/// `/proc/PID/cmdline` faults the pushed-out stack page back in and the
/// kernel charges that major fault to the context's cgroup), not a wake.
pub fn is_active(before: &Counters, after: &Counters, t: &ActivityThresholds) -> bool {
    if after.cpu < before.cpu || after.pgfault < before.pgfault {
        return true;
    }
    let span = after.at.saturating_sub(before.at);
    if span.is_zero() {
        return false;
    }
    let faults = (after.pgfault - before.pgfault) as f64;
    let ran = after.cpu > before.cpu;
    cpu_above(after.cpu - before.cpu, span, MIN_CPU_SPAN, t)
        || (ran && faults > (MIN_FAULTS as f64).max(t.faults_per_s * span.as_secs_f64()))
}

/// Whether the context itself took the charge that fired its wake event
/// between `before` and `after`: at least `FIRED_MIN_FAULTS` page faults
/// of its own (or counters that went back: a new context). A charge it did
/// not take moves none: a page of it read back from swap by someone else
/// is charged to it all the same (another context's swap read-ahead, a
/// read of its shared memory), and its event fires (see
/// `model::Via::Fired`); that its runtime ran meanwhile, or faulted a page
/// or two, is its housekeeping, not a wake.
pub fn took_its_charge(before: &Counters, after: &Counters) -> bool {
    after.pgfault < before.pgfault
        || after.cpu < before.cpu
        || after.pgfault - before.pgfault >= FIRED_MIN_FAULTS
}

/// The fewest faults of its own that make a fired event a context's wake.
/// Measured in bench/faas (session 43), where a function pushed out to its
/// floor is charged by its neighbours' swap read-ahead: on the swap file
/// (a disk the kernel reads ahead by slot clusters) 495 events came with no
/// call, their faults a median 0 and p90 5, their CPU a median 0.27 ms
/// (the runtime's select loop); the 172 with a call in flight, faults a
/// median 46. "Faulted or ran" took the 495 for wakes and read each
/// function back whole. At 8, 37 of the 495 pass, and 17 of the 172 wait
/// for the next reading (on zram: 3 of 265). Not enough: in another run
/// 173 such events passed, with a median 16 faults of the function's own
/// (its runtime refaulting pages memext had pushed out): a count of faults
/// cannot tell those from a call's first ones (docs/faas/HISTORY.md, session
/// 43).
pub const FIRED_MIN_FAULTS: u64 = 8;

/// Whether `used` CPU time over `span` is above the share, the span taken
/// as at least `min_span` (`MIN_CPU_SPAN` but where a wake is expected).
pub fn cpu_above(
    used: Duration,
    span: Duration,
    min_span: Duration,
    t: &ActivityThresholds,
) -> bool {
    used.as_secs_f64() > t.cpu_share * span.max(min_span).as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(at_ms: u64, cpu_ms: u64, faults: u64) -> Counters {
        Counters {
            at: Duration::from_millis(at_ms),
            cpu: Duration::from_millis(cpu_ms),
            pgfault: faults,
            pgmajfault: 0,
        }
    }

    #[test]
    fn idle_noise_is_not_activity() {
        let t = ActivityThresholds::default();
        // 1 ms of CPU and 10 faults over a second: a sleeping process's timers.
        assert!(!is_active(&c(0, 100, 1000), &c(1000, 101, 1010), &t));
    }

    #[test]
    fn cpu_or_faults_is_activity() {
        let t = ActivityThresholds::default();
        assert!(is_active(&c(0, 0, 0), &c(20, 6, 0), &t)); // 6 ms of CPU within 20 ms
        assert!(is_active(&c(0, 0, 0), &c(100, 1, 100), &t)); // 100 faults (and 1 ms of CPU)
        assert!(is_active(&c(0, 0, 0), &c(2000, 1, 101), &t)); // above 50/s over 2 s
        assert!(is_active(&c(0, 0, 0), &c(10_000, 201, 0), &t)); // 2% over 10 s
    }

    #[test]
    fn a_sleeping_runtimes_housekeeping_is_not_activity() {
        let t = ActivityThresholds::default();
        // A pushed-out Python HTTP handler's select loop (measured): 1 ms of
        // CPU within a 20 ms poll, then 16 major of 45 faults within 100 ms.
        assert!(!is_active(&c(0, 0, 0), &c(20, 1, 0), &t));
        let mut after = c(100, 1, 45);
        after.pgmajfault = 16;
        assert!(!is_active(&c(0, 0, 0), &after, &t));
        // Over a whole tick: 2 ms of CPU and 45 faults in a second.
        assert!(!is_active(&c(0, 0, 0), &c(1000, 2, 45), &t));
    }

    #[test]
    fn a_fault_the_context_did_not_run_for_is_not_activity() {
        let t = ActivityThresholds::default();
        // Someone read a sleeping process's memory (ps: /proc/PID/cmdline):
        // one major fault charged to its cgroup, no CPU of its own.
        let mut after = c(30_000, 100, 2652);
        after.pgmajfault = 1;
        assert!(!is_active(&c(0, 100, 2651), &after, &t));
        assert!(!is_active(&c(0, 100, 0), &c(1000, 100, 5000), &t));
    }

    #[test]
    fn counter_reset_is_activity_and_zero_interval_is_not() {
        let t = ActivityThresholds::default();
        assert!(is_active(&c(0, 500, 0), &c(10, 1, 0), &t));
        assert!(!is_active(&c(10, 0, 0), &c(10, 0, 0), &t));
    }
}
