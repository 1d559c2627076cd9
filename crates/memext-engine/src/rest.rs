//! A context's CPU at rest, learned from its own readings, and a warm call
//! told apart from it.
//!
//! A resident context's call takes no fault and little CPU. Measured on
//! this host (bench/faas' Python handler alone in a v1 cgroup, its 48 MiB
//! heap resident, read every second): at rest 0.22-0.30 ms of CPU a second
//! (its server's select loop), a call 1.1-1.6 ms, no fault, no charge. Over
//! a tick that is far below the activity share (2% of a second: 20 ms), so
//! such calls went unseen: about 100 of a bench/faas run's 535, a timer's
//! period broken by the gap for the rest of its history window, a Poisson
//! function's rate undercounted (the functions kept resident looking rarer
//! than they were, and pushed out for it).
//!
//! So a context that rests (idle, or active and quiet) with its pages in
//! is judged against its own rest: CPU beyond twice its mean rate (or 1.5
//! times its second-busiest second at rest, if more) plus `CALL_CPU` is a
//! call. The second-busiest, not the busiest: a call the rule missed is
//! learned as rest (as is every call before `LEARNED`), and as the peak it
//! put the allowance above every call after it (1.5 times a call's 1.2-1.8
//! ms plus `CALL_CPU`: bench/faas, session 65, the missed calls' allowances
//! a median 2.7 ms against their 1.75 ms of CPU); one such reading (or one
//! burst) no longer raises it, two do.
//! (`CALL_CPU` is set from this one handler's calls; a context whose calls
//! take less CPU than that is still seen only by the activity thresholds.)
//! Only once `LEARNED` of rest has been seen; only where the pages are in
//! (a pushed-out context's housekeeping refaults with CPU of its own, and
//! its call faults anyway: the activity thresholds see it). The rest is
//! learned only there too: in a bench/faas run (`docs/faas/s41-2026-11-28/`,
//! `diag1`; the readings of a second or more that used half a call's CPU
//! or more, during the trace), a resting function paged out used 5 ms or
//! more in 97 of 770 (up to 37 ms), with its pages in in 13 of 88; and
//! 22 of the 34 calls after a quiet gap that went
//! unseen used 2.2-9.0 ms against allowances of 1.1-11.6 ms. (Learned
//! with the pages in only, three rotated rounds against the build before
//! were mixed: calls not seen 98, 88, 89 against 77, 94, 93.)
//!
//! A resting function with its pages in also takes bursts of CPU that are
//! no call: three took 2.93-2.96 ms each in the same second, none called,
//! and perf placed one such burst (3 ms) at the return from its poll's
//! sleep (`_raw_spin_unlock_irqrestore` under `hrtimer_cancel`). Their
//! cause is not found (not the cap's reclaim: a function at rest beside a
//! hog under a capped parent used 0.15-0.25 ms a second once its loop's
//! pages were back; not the hypervisor's steal: 8 of 21 such warm calls
//! came in seconds with steal, 7 of 21 real ones did). The same engine
//! saw 9-11 warm calls with no call a run one morning and 49-67 that
//! afternoon: CPU alone does not tell a warm call from them. What the
//! context touched does (`touch`): CPU beyond the allowance is a call only
//! if it read a share of its memory, and CPU that touched nothing is not
//! learned as rest either.

use std::time::Duration;

use crate::activity::MIN_CPU_SPAN;

/// Rest seen before it judges. A function brought back for its call rests
/// with its pages in for seconds before the next: at 10 s, half of the calls
/// after a quiet gap that went unseen came before its rest was learned
/// (bench/faas, session 65: 50 of 88). Replayed on every resting reading of
/// eight runs (session 66, `docs/faas/s66-2026-12-04/replay-rest.md`), 5 s
/// and the second-busiest second together left 11-20 such calls a run
/// unseen against 13-38, and took 23-45 readings without a call for calls
/// against 18-32; the keep order replayed with those kept 1-2 fewer calls
/// warm in two runs and 5-10 more in six.
pub const LEARNED: Duration = Duration::from_secs(5);
/// Beyond this much rest seen, what was learned counts half: a rest that
/// changed (a context brought back, its runtime quieter) is learned anew.
pub const FORGET_AFTER: Duration = Duration::from_secs(60);
/// What a call takes beyond the rest's allowance. Measured on the same
/// handler over 90 s while a bench/faas run loaded the host: its seconds at
/// rest took 0.26-0.30 ms, a few up to 0.8 ms; a warm call, its touch
/// (0.43 ms at a run's 5th percentile, 0.85 at its median) and the HTTP
/// exchange (about 0.5 ms), 0.95-2 ms. At 0.7 ms the rest's busiest seconds
/// measured stay below the allowance (1.2 ms over a second) and the calls
/// above it. (In bench/faas, wakes, onsets and warm calls with no call were
/// 12 and 15 a run at 0.5 ms and 7-16 at 0.7 ms, against 3-9 without the
/// rule: not read further.)
pub const CALL_CPU: Duration = Duration::from_micros(700);
/// Major faults a warm call may take: pages of it the kernel's reclaim at
/// a capped parent sent to the tier, read back by its handler. In four
/// bench/faas runs under the rule of no major fault (session 49,
/// `docs/faas/s49-2026-12-02/resting.py`), the resting readings with their
/// pages in and CPU beyond the allowance that had 1-16 major faults held a
/// call in 30 of 31; they went unrecorded, and before that a call learned
/// as rest raised its function's allowance over the calls after it. More
/// faults than this is the context paging in, which the activity
/// thresholds judge (a paged-out runtime's housekeeping refaults with CPU
/// of its own, above).
pub const WARM_CALL_MAJOR_FAULTS: u64 = 16;
/// The span the rest's allowance is reckoned over, at least: its
/// housekeeping comes in runs (one every 0.5 s), which a shorter window
/// either misses or sees whole.
pub const ALLOWANCE_SPAN: Duration = Duration::from_secs(1);

/// CPU seen at rest: sums of CPU time and span, and the busiest and
/// second-busiest readings of at least `ALLOWANCE_SPAN` (CPU seconds per
/// second).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RestCpu {
    cpu: Duration,
    span: Duration,
    peak: f64,
    second: f64,
}

impl RestCpu {
    /// A reading at rest that was no activity: `used` CPU over `span`.
    /// Spans shorter than `MIN_CPU_SPAN` are not learned from.
    pub fn learn(&mut self, used: Duration, span: Duration) {
        if span < MIN_CPU_SPAN {
            return;
        }
        self.cpu += used;
        self.span += span;
        if span >= ALLOWANCE_SPAN {
            let per_s = used.as_secs_f64() / span.as_secs_f64();
            if per_s > self.peak {
                self.second = self.peak;
                self.peak = per_s;
            } else {
                self.second = self.second.max(per_s);
            }
        }
        if self.span > FORGET_AFTER {
            self.cpu /= 2;
            self.span /= 2;
            self.peak = (self.peak / 2.0).max(self.rate());
            self.second = (self.second / 2.0).max(self.rate());
        }
    }

    /// Mean CPU seconds per second at rest.
    fn rate(&self) -> f64 {
        if self.span.is_zero() {
            return 0.0;
        }
        self.cpu.as_secs_f64() / self.span.as_secs_f64()
    }

    /// What the rest may use over `span` (None: not learned yet).
    pub fn allowance(&self, span: Duration) -> Option<Duration> {
        if self.span < LEARNED {
            return None;
        }
        let s = span.max(ALLOWANCE_SPAN).as_secs_f64();
        let per_s = (2.0 * self.rate()).max(1.5 * self.second);
        Some(Duration::from_secs_f64(per_s * s) + CALL_CPU)
    }

    /// Whether `used` CPU over `span` is more than the rest: a call.
    pub fn is_call(&self, used: Duration, span: Duration) -> bool {
        self.allowance(span).is_some_and(|a| used > a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);
    const S: Duration = Duration::from_secs(1);

    /// Seconds of the measured handler's rest: 0.22-0.30 ms each.
    fn rested(seconds: u32) -> RestCpu {
        let mut r = RestCpu::default();
        for k in 0..seconds {
            let us = [222, 231, 239, 295, 227][k as usize % 5];
            r.learn(Duration::from_micros(us), S);
        }
        r
    }

    #[test]
    fn a_warm_call_is_more_than_the_rest() {
        let r = rested(20);
        // A small call (1.1 ms) with its second's rest.
        assert!(r.is_call(Duration::from_micros(1340), S));
        // The rest's busiest seconds under load are not.
        assert!(!r.is_call(Duration::from_micros(300), S));
        assert!(!r.is_call(Duration::from_micros(800), S));
        // Within 20 ms of the last reading, the call alone is.
        assert!(r.is_call(Duration::from_micros(1300), 20 * MS));
        assert!(!r.is_call(Duration::from_micros(120), 20 * MS));
    }

    #[test]
    fn it_does_not_judge_before_it_has_seen_enough_rest() {
        let r = rested(4);
        assert_eq!(r.allowance(S), None);
        assert!(!r.is_call(100 * MS, S));
        assert!(rested(5).allowance(S).is_some());
    }

    #[test]
    fn short_readings_are_not_learned_from() {
        let mut r = rested(10);
        let before = r;
        r.learn(5 * MS, 20 * MS);
        assert_eq!(r, before);
    }

    /// A busier rest (2 ms a second, a runtime's timers) allows more; busy
    /// seconds in it raise the allowance by the second-busiest.
    #[test]
    fn the_allowance_follows_the_rest_and_its_busy_seconds() {
        let mut r = RestCpu::default();
        for _ in 0..20 {
            r.learn(2 * MS, S);
        }
        assert!(!r.is_call(4 * MS, S), "twice the rest");
        assert!(r.is_call(Duration::from_micros(4800), S));
        r.learn(4 * MS, S);
        r.learn(4 * MS, S);
        assert!(!r.is_call(6 * MS, S), "1.5 times its second-busiest second");
    }

    /// A call it missed (or one burst), learned as rest, does not put the
    /// allowance above the calls after it: one busy second is not enough.
    #[test]
    fn one_call_learned_as_rest_does_not_hide_the_next() {
        let mut r = rested(20);
        r.learn(Duration::from_micros(1700), S);
        assert!(r.is_call(Duration::from_micros(1700), S));
        r.learn(Duration::from_micros(1700), S);
        assert!(
            !r.is_call(Duration::from_micros(1700), S),
            "two such seconds are its rest"
        );
    }

    /// A rest that became quieter (its pages brought back: no refaults)
    /// is learned anew: what came before counts half every minute.
    #[test]
    fn an_old_rest_is_forgotten() {
        let mut r = RestCpu::default();
        for _ in 0..60 {
            r.learn(2 * MS, S);
        }
        assert!(!r.is_call(Duration::from_micros(1600), S));
        for _ in 0..180 {
            r.learn(Duration::from_micros(250), S);
        }
        assert!(r.is_call(Duration::from_micros(1600), S));
    }
}
