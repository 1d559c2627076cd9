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
    let secs = after.at.saturating_sub(before.at).as_secs_f64();
    if secs <= 0.0 {
        return false;
    }
    let cpu = (after.cpu - before.cpu).as_secs_f64() / secs;
    let faults = (after.pgfault - before.pgfault) as f64 / secs;
    let majors = after.pgmajfault.saturating_sub(before.pgmajfault);
    let ran = after.cpu > before.cpu;
    cpu > t.cpu_share || (ran && (faults > t.faults_per_s || majors > 0))
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
    fn cpu_or_faults_or_a_major_fault_is_activity() {
        let t = ActivityThresholds::default();
        assert!(is_active(&c(0, 0, 0), &c(20, 5, 0), &t)); // 25% of a CPU over 20 ms
        assert!(is_active(&c(0, 0, 0), &c(100, 1, 100), &t)); // 1000 faults/s (and 1 ms of CPU)
        let mut after = c(1000, 0, 0);
        after.pgmajfault = 1;
        after.cpu = Duration::from_micros(50);
        assert!(is_active(&c(0, 0, 0), &after, &t));
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
