//! The per-context state machine: active → idle → waking → active.
//!
//! A context starts active (memext knows nothing yet and must not push out
//! what may be in use). It becomes idle after `idle_after` without activity,
//! wakes on the first activity seen while idle, and is active again once it
//! has stayed awake for `settle`. Every wake is recorded in its history.
//!
//! Without accessed-bit tracking (absent on many kernels), a process that
//! keeps touching memory it has mapped, with little CPU, looks idle. When such
//! a context wakes sooner after becoming idle than it took to be judged idle,
//! that idle was false: its idle threshold doubles (up to 16×), and halves
//! again after each idle period that lasted at least the threshold. A wake
//! on its schedule (a periodic context's, when the history predicted it) is
//! no false idle, however short the sleep.
//!
//! An active context that starts again after a quiet stretch of at least
//! `ONSET_QUIET` (a function called on a timer more often than it takes to
//! be judged idle) has an *onset*: it is recorded in the history like a
//! wake, so that its calls are predicted whether or not it slept between
//! them, and the engine can bring back what it paged out of it meanwhile.

use std::time::Duration;

use crate::activity::{cpu_above, is_active, ActivityThresholds, Counters, MIN_CPU_SPAN};
use crate::history::ActivationHistory;
use crate::rest::RestCpu;
use crate::Instant;

/// How long an active context must have been quiet for its next activity
/// to be an onset: two ticks without activity.
pub const ONSET_QUIET: Duration = Duration::from_secs(2);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Transition {
    BecameIdle,
    Woke,
    Settled,
    /// Active, it started again after a quiet stretch (no state change).
    Onset,
    /// Resting with its pages in, it was called and done within a reading
    /// (`crate::rest`): recorded in its history, nothing else changes. It
    /// needs no room and nothing brought back, and it rests on as before
    /// (served as a wake, each such call took a woken context's room and
    /// margin from the others for its settle time).
    WarmCall,
}

impl Transition {
    /// The name events carry (`became-idle`, `woke`, `settled`, `onset`,
    /// `warm-call`).
    pub fn name(self) -> &'static str {
        match self {
            Transition::BecameIdle => "became-idle",
            Transition::Woke => "woke",
            Transition::Settled => "settled",
            Transition::Onset => "onset",
            Transition::WarmCall => "warm-call",
        }
    }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ContextModel {
    pub state: State,
    /// When the current state began.
    pub since: Instant,
    /// When memext began to watch it: how long its wake rate is judged over.
    #[serde(default)]
    pub watched_since: Instant,
    pub last_activity: Instant,
    #[serde(skip)]
    last: Option<Counters>,
    /// The CPU time between-ticks polls are judged against (when, how much):
    /// the last tick's, moved on by polls at most every `MIN_CPU_SPAN`.
    #[serde(skip)]
    poll_ref: Option<(Instant, Duration)>,
    pub history: ActivationHistory,
    /// Multiplier of `idle_after` learned from false idles (1, 2, 4, … 16).
    pub idle_scale: u32,
    /// The last onset while active.
    #[serde(skip)]
    pub onset: Option<Instant>,
    /// Its CPU at rest, to tell a warm call from (`rest`).
    #[serde(skip)]
    rest: RestCpu,
}

/// Why a sample was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// The tick's reading.
    Tick,
    /// The kernel said the context charged memory past what memext left it
    /// (a v1 usage threshold, a PSI trigger). `own`: none of it is memext's
    /// doing (no pages of it moving, no refaults of what memext just took):
    /// the charge itself is activity, whatever the CPU counted so far.
    Fired { own: bool },
}

/// What the engine knows of a context beyond its counters, for judging
/// a reading of it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Known {
    /// A wake is due: it is held in DRAM for a predicted one (polls only).
    pub expected: bool,
    /// Its pages are in (not pushed out, next to nothing in swap): its
    /// call takes no fault, only CPU beyond its rest's.
    pub resident: bool,
}

/// The largest multiplier of `idle_after` a context can learn.
pub const MAX_IDLE_SCALE: u32 = 16;

impl ContextModel {
    pub fn new(now: Instant) -> Self {
        Self {
            state: State::Active,
            since: now,
            watched_since: now,
            last_activity: now,
            last: None,
            poll_ref: None,
            history: ActivationHistory::default(),
            idle_scale: 1,
            onset: None,
            rest: RestCpu::default(),
        }
    }

    /// Whether it has been quiet (no activity seen) for `ONSET_QUIET` at `now`.
    pub fn is_quiet(&self, now: Instant) -> bool {
        now.saturating_sub(self.last_activity) >= ONSET_QUIET
    }

    /// Whether it had an onset within `within` before `now`.
    pub fn had_onset(&self, now: Instant, within: Duration) -> bool {
        self.onset.is_some_and(|o| now.saturating_sub(o) <= within)
    }

    /// The idle threshold in force for this context.
    pub fn idle_after(&self, p: &ModelParams) -> Duration {
        p.idle_after * self.idle_scale
    }

    /// A waking context that waited (frozen) for room runs from now: the
    /// time it takes to settle counts from here, not from its wake.
    pub fn admitted(&mut self, now: Instant) {
        if self.state == State::Waking {
            self.since = now;
        }
    }

    /// Takes one sample; returns the transition it caused, if any.
    pub fn observe(&mut self, c: Counters, p: &ModelParams) -> Option<Transition> {
        self.observe_via(c, p, Via::Tick, Known::default())
    }

    /// Takes one sample, taken because the kernel said the context charged
    /// memory (`Via::Fired`) or at a tick; returns the transition it
    /// caused, if any. Resting with its pages in (`known.resident`), a
    /// call is also CPU beyond its own rest's (`rest`).
    pub fn observe_via(
        &mut self,
        c: Counters,
        p: &ModelParams,
        via: Via,
        known: Known,
    ) -> Option<Transition> {
        let rests = self.rests(c.at);
        let active = via == Via::Fired { own: true }
            || self
                .last
                .as_ref()
                .is_some_and(|l| is_active(l, &c, &p.thresholds));
        let warm = !active
            && self
                .last
                .as_ref()
                .is_some_and(|l| self.is_warm_call(l, &c, rests && known.resident));
        if rests && !active && !warm {
            if let Some(l) = &self.last {
                self.rest
                    .learn(c.cpu.saturating_sub(l.cpu), c.at.saturating_sub(l.at));
            }
        }
        self.last = Some(c);
        self.poll_ref = Some((c.at, c.cpu));
        if warm {
            return Some(self.warm_call(c.at));
        }
        let now = c.at;
        let onset = active && self.state == State::Active && self.is_quiet(now);
        if active {
            self.last_activity = c.at;
        }
        if onset {
            return Some(self.record_onset(now));
        }
        let (next, event) = match self.state {
            // An event is a reading taken as the context charges memory:
            // never the moment it went idle (what it does is not counted
            // yet: 10 ms into a call, its first faults at a 4 MiB limit).
            State::Active
                if !active
                    && via == Via::Tick
                    && now.saturating_sub(self.last_activity) >= self.idle_after(p) =>
            {
                (State::Idle, Transition::BecameIdle)
            }
            State::Idle if active => return Some(self.wake(now, p)),
            State::Waking if now.saturating_sub(self.since) >= p.settle => {
                (State::Active, Transition::Settled)
            }
            _ => return None,
        };
        self.state = next;
        self.since = now;
        Some(event)
    }

    /// Whether it rests at `now`: idle, or active and quiet.
    fn rests(&self, now: Instant) -> bool {
        self.state == State::Idle || (self.state == State::Active && self.is_quiet(now))
    }

    /// A call of a resting context with its pages in (`judged`): no major
    /// fault, and more CPU than its rest uses.
    fn is_warm_call(&self, before: &Counters, after: &Counters, judged: bool) -> bool {
        judged
            && after.pgmajfault == before.pgmajfault
            && self.rest.is_call(
                after.cpu.saturating_sub(before.cpu),
                after.at.saturating_sub(before.at),
            )
    }

    /// A between-ticks reading of an idle (or active but quiet) context's
    /// CPU time (`cpu` at `at`): whether it woke (or had an onset). Judged against the last tick's reading or a
    /// later poll's, over at least `MIN_CPU_SPAN` (see there: a sleeping
    /// runtime's housekeeping is no wake); the tick's own reference is left
    /// alone, so the next tick still judges its whole interval.
    ///
    /// `expected`: a wake is due (the context is held in DRAM, mapped back,
    /// for a predicted one). Such a wake takes no fault and a few ms of CPU,
    /// so it is judged over the poll's own window, as it comes; a false one
    /// costs no read-back there, only an early entry in the history.
    pub fn poll(
        &mut self,
        at: Instant,
        cpu: Duration,
        p: &ModelParams,
        known: Known,
    ) -> Option<Transition> {
        // Active but quiet, its next activity is an onset, seen as soon as
        // a wake would be; busy, it is the tick's to judge.
        let resting = self.state == State::Active && self.is_quiet(at);
        if self.state != State::Idle && !resting {
            return None;
        }
        let Some((at0, cpu0)) = self.poll_ref else {
            self.poll_ref = Some((at, cpu));
            return None;
        };
        let span = at.saturating_sub(at0);
        let min_span = if known.expected {
            Duration::ZERO
        } else {
            MIN_CPU_SPAN
        };
        let used = cpu.saturating_sub(cpu0);
        if cpu < cpu0 || cpu_above(used, span, min_span, &p.thresholds) {
            self.last_activity = at;
            if resting {
                return Some(self.record_onset(at));
            }
            return Some(self.wake(at, p));
        }
        if known.resident && self.rest.is_call(used, span) {
            self.poll_ref = Some((at, cpu));
            return Some(self.warm_call(at));
        }
        if span >= min_span {
            self.rest.learn(used, span);
            self.poll_ref = Some((at, cpu));
        }
        None
    }

    /// A warm call while it rests: in its history, nothing else changes.
    fn warm_call(&mut self, now: Instant) -> Transition {
        self.history.record(now);
        Transition::WarmCall
    }

    /// Active, it started again after a quiet stretch: recorded like a wake.
    fn record_onset(&mut self, now: Instant) -> Transition {
        self.history.record(now);
        self.onset = Some(now);
        Transition::Onset
    }

    /// Idle → waking: the wake is recorded, and an idle that ended sooner
    /// than it took to judge doubles the idle threshold, unless the history
    /// predicted the wake (a periodic context called on its schedule).
    fn wake(&mut self, now: Instant, p: &ModelParams) -> Transition {
        let on_schedule = self.history.is_on_schedule(now);
        self.history.record(now);
        let slept = now.saturating_sub(self.since);
        if slept < self.idle_after(p) && !on_schedule {
            self.idle_scale = (self.idle_scale * 2).min(MAX_IDLE_SCALE);
        } else {
            self.idle_scale = (self.idle_scale / 2).max(1);
        }
        self.state = State::Waking;
        self.since = now;
        Transition::Woke
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
    fn false_idles_lengthen_the_threshold_and_true_ones_shorten_it() {
        let p = ModelParams {
            idle_after: Duration::from_secs(3),
            settle: Duration::from_secs(1),
            ..Default::default()
        };
        let mut m = ContextModel::new(Duration::ZERO);
        let mut cpu = 0;
        let mut trace = Vec::new();
        for i in 0..=60 {
            if [10, 15, 40].contains(&i) {
                cpu += 500;
            }
            trace.push((f64::from(i), cpu));
        }
        let events = run(&mut m, &p, &trace);
        // Idle at 3, woke at 10 (slept 7 >= 3: true idle, scale stays 1);
        // settled 11, idle at 13, woke at 15 (slept 2 < 3: false, scale 2);
        // settled 16, now idle needs 6 s: at 21; woke at 40 (slept 19 >= 6:
        // true, scale back to 1); settled 41, idle again at 43.
        let idle_at: Vec<f64> = events
            .iter()
            .filter(|e| e.1 == Transition::BecameIdle)
            .map(|e| e.0)
            .collect();
        assert_eq!(idle_at, vec![3.0, 13.0, 21.0, 43.0]);
        assert_eq!(m.idle_scale, 1);
    }

    /// A function called every 8 s, judged idle only after 10 s: it never
    /// sleeps, but each call after a quiet stretch is an onset, recorded,
    /// and its period is learned from them.
    #[test]
    fn calls_of_a_context_that_never_sleeps_are_onsets_in_its_history() {
        let p = ModelParams {
            idle_after: Duration::from_secs(10),
            ..Default::default()
        };
        let mut m = ContextModel::new(Duration::ZERO);
        let mut cpu = 0;
        let mut trace = Vec::new();
        for i in 0..=44 {
            if i % 8 == 4 {
                cpu += 200; // a call
            }
            trace.push((f64::from(i), cpu));
        }
        let events = run(&mut m, &p, &trace);
        let at = |t: &[f64]| {
            t.iter()
                .map(|&s| (s, Transition::Onset))
                .collect::<Vec<_>>()
        };
        assert_eq!(events, at(&[4.0, 12.0, 20.0, 28.0, 36.0, 44.0]));
        assert_eq!(m.state, State::Active);
        assert_eq!(m.history.period(), Some(Duration::from_secs(8)));
        assert!(m.had_onset(Duration::from_secs(45), Duration::from_secs(2)));
        // Busy without a pause: no onset.
        let mut busy = ContextModel::new(Duration::ZERO);
        let steady: Vec<(f64, u64)> = (0..=20u32)
            .map(|i| (f64::from(i), 500 * u64::from(i)))
            .collect();
        assert!(run(&mut busy, &p, &steady).is_empty());
    }

    /// A periodic context whose call comes soon after it was judged idle,
    /// on the schedule its history predicts, was truly idle: the threshold
    /// stays; off its schedule, the same short sleep doubles it.
    #[test]
    fn a_wake_on_its_schedule_is_no_false_idle() {
        let p = ModelParams {
            idle_after: Duration::from_secs(10),
            settle: Duration::from_secs(1),
            ..Default::default()
        };
        // Called every 20 s; judged idle at 71, 10 s after the call at 61.
        for (wake, scale) in [(80, 1), (73, 2)] {
            let mut m = ContextModel::new(Duration::from_secs(60));
            for w in [0.0, 20.0, 40.0, 60.0] {
                m.history.record(Duration::from_secs_f64(w));
            }
            let mut cpu = 0;
            let mut trace = Vec::new();
            for i in 60..=82 {
                if i == 61 || i == wake {
                    cpu += 200;
                }
                trace.push((f64::from(i), cpu));
            }
            let events = run(&mut m, &p, &trace);
            assert!(
                events.contains(&(f64::from(wake), Transition::Woke)),
                "{events:?}"
            );
            assert_eq!(m.idle_scale, scale, "wake at {wake}");
        }
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
        // Sampled every 20 ms: 6 ms of CPU in 20 ms is activity at once.
        assert_eq!(
            run(&mut m, &p, &[(1.02, 0), (1.04, 6)]),
            vec![(1.04, Transition::Woke)]
        );
    }

    /// Between ticks: a runtime's housekeeping (1 ms of CPU every 0.5 s,
    /// read every 20 ms) is no wake; 6 ms of CPU is, at the poll that sees
    /// it; the tick after a poll still judges its whole interval.
    #[test]
    fn polls_judge_cpu_over_a_quarter_second_at_least() {
        let p = ModelParams {
            idle_after: Duration::from_secs(1),
            ..Default::default()
        };
        let ms = Duration::from_millis;
        const EXPECTED: Known = Known {
            expected: true,
            resident: false,
        };
        let mut m = ContextModel::new(Duration::ZERO);
        run(&mut m, &p, &[(0.0, 0), (1.0, 0)]);
        assert_eq!(m.state, State::Idle);
        let mut cpu = 0;
        for k in 1..=100u64 {
            if k % 25 == 0 {
                cpu += 1; // one housekeeping run every 0.5 s
            }
            let at = Duration::from_secs(1) + ms(20 * k);
            assert_eq!(m.poll(at, ms(cpu), &p, Known::default()), None, "poll {k}");
        }
        // The tick at 3 s: 4 ms of CPU over 2 s, no wake either.
        assert!(run(&mut m, &p, &[(3.0, cpu)]).is_empty());
        assert_eq!(m.poll(ms(3020), ms(cpu + 3), &p, Known::default()), None);
        assert_eq!(
            m.poll(ms(3040), ms(cpu + 6), &p, Known::default()),
            Some(Transition::Woke),
            "6 ms of CPU within 40 ms"
        );
        assert_eq!(m.state, State::Waking);
        // Held for a predicted wake: 2 ms of CPU within a 20 ms poll is it.
        let mut h = ContextModel::new(Duration::ZERO);
        run(&mut h, &p, &[(0.0, 0), (1.0, 0)]);
        assert_eq!(h.poll(ms(1020), ms(0), &p, EXPECTED), None);
        assert_eq!(h.poll(ms(1040), ms(2), &p, EXPECTED), Some(Transition::Woke));
    }
}
