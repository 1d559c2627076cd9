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
//! Busy (active and not quiet, or waking), a reading with a call after one
//! without any is another call (`Transition::Call`): only recorded, so that
//! a context called every second or two is not taken for a rare one.

use std::time::Duration;

use crate::activity::{is_active, took_its_charge, ActivityThresholds, Counters};
use crate::history::ActivationHistory;
use crate::rest::{self, RestCpu};
use crate::touch::{self, Ask, Touch, Touches};
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
    /// Busy (active and not quiet, or waking), a call after a tick's
    /// reading without one since the last call recorded: recorded in its
    /// history, nothing else changes (see `ContextModel::quiet_since_call`).
    Call,
}

impl Transition {
    /// The name events carry (`became-idle`, `woke`, `settled`, `onset`,
    /// `warm-call`, `call`).
    pub fn name(self) -> &'static str {
        match self {
            Transition::BecameIdle => "became-idle",
            Transition::Woke => "woke",
            Transition::Settled => "settled",
            Transition::Onset => "onset",
            Transition::WarmCall => "warm-call",
            Transition::Call => "call",
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
    /// Where the count of what it touched at rest starts (`touch`).
    #[serde(skip)]
    touches: Touches,
    /// The last reading judged (tick or poll): what a transition it caused
    /// was seen in, for the daemon's log.
    #[serde(skip)]
    pub judged: Option<Judged>,
    /// Busy, a reading with no call in it, begun after the last call
    /// recorded, came since: the next reading with one is another call
    /// (the reading that held the last one, a wake seen by a poll or a cold
    /// call's read-back running on, is that call). A context called again
    /// within `ONSET_QUIET` of its last activity has no onset, so its calls
    /// in one stretch were one wake in its history, and it looked rarer
    /// than it was (bench/faas, session 47: 105 of 535 calls came within
    /// 2 s of the function's previous one). Replayed on that trace
    /// (`docs/faas/s48-2026-12-01/replay.py`), the keep order finds 277
    /// calls warm with such calls merged, 282-283 with calls a quiet tick
    /// apart counted, 291 with every call. At a 1 s tick the onset already
    /// counts most of those (two ticks quiet), and this adds the calls
    /// while a woken context settles: 4-9 a run, no change beyond the
    /// spread measured (session 48's A/B). Telling calls a second apart
    /// needs readings finer than the tick.
    #[serde(skip)]
    quiet_since_call: bool,
}

/// A reading as it was judged: the CPU time the context used over `span`,
/// the page faults it took and how many of them were major (a full
/// reading; 0 for a poll, which reads CPU only), whether a wake was
/// expected (it was held for a predicted one), and what it touched where its CPU said "call" and the host was asked
/// (`touch`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Judged {
    pub cpu: Duration,
    pub span: Duration,
    pub faults: u64,
    pub major_faults: u64,
    pub expected: bool,
    pub touched: Option<Touch>,
}

/// Why a sample was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// The tick's reading.
    Tick,
    /// The kernel said the context charged memory past what memext left it
    /// (a v1 usage threshold, a PSI trigger). `own`: none of it is memext's
    /// doing (no pages of it moving, no refaults of what memext just took):
    /// the charge is activity, whatever the CPU counted so far, if the
    /// context took `activity::FIRED_MIN_FAULTS` faults of its own since
    /// the last reading (`activity::took_its_charge`). (Another
    /// context's swap-in charges it too: with swap on a rotational device
    /// the kernel reads ahead the neighbouring swap slots, whoever's they
    /// are, and charges each page to its owner. Two contexts pushed out
    /// together interleave their slots; touching one of two 64 MiB ones
    /// here charged 24-31 MiB to the other, at its 1 MiB limit, and fired
    /// its event 382-495 times while it took no fault (three rounds; one
    /// after the other, none): `bench/scale/readahead.py`,
    /// `docs/scale/readahead/`.)
    Fired { own: bool },
}

/// What the engine knows of a context beyond its counters, for judging
/// a reading of it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Known {
    /// A wake is due: it is held in DRAM for a predicted one (polls, and
    /// a tick's reading of a polled context).
    pub expected: bool,
    /// Watched between ticks (`Engine::watched`): a tick's reading of it is
    /// judged as a poll's first (`observe_asking`).
    pub polled: bool,
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
            touches: Touches::default(),
            judged: None,
            quiet_since_call: false,
        }
    }

    /// Whether it has been quiet (no activity seen) for `ONSET_QUIET` at `now`.
    pub fn is_quiet(&self, now: Instant) -> bool {
        now.saturating_sub(self.last_activity) >= ONSET_QUIET
    }

    /// What its rest may use over `span` before a reading of it is a warm
    /// call (`rest`; None: not learned yet).
    pub fn rest_allowance(&self, span: Duration) -> Option<Duration> {
        self.rest.allowance(span)
    }

    /// Whether it had an onset within `within` before `now`.
    pub fn had_onset(&self, now: Instant, within: Duration) -> bool {
        self.onset.is_some_and(|o| now.saturating_sub(o) <= within)
    }

    /// The idle threshold in force for this context.
    pub fn idle_after(&self, p: &ModelParams) -> Duration {
        p.idle_after * self.idle_scale
    }

    /// A context that waited (frozen) for room runs from now: the time a
    /// wake takes to settle counts from here, not from its wake, and the
    /// time it waited is no stretch without activity (judged from its last
    /// reading, an onset that waited half a minute was taken for idle the
    /// tick after it was let in, pushed out, and queued again at the back:
    /// bench/peers' grow cells, session 36).
    pub fn admitted(&mut self, now: Instant) {
        if self.state == State::Waking {
            self.since = now;
        }
        self.last_activity = self.last_activity.max(now);
    }

    /// Takes a reading as the one the next is judged from, judging nothing
    /// (a context that waits frozen: what it did not do is no idleness).
    pub fn rebase(&mut self, c: Counters) {
        self.last = Some(c);
        self.poll_ref = Some((c.at, c.cpu));
        self.judged = None;
    }

    /// Takes one sample; returns the transition it caused, if any.
    pub fn observe(&mut self, c: Counters, p: &ModelParams) -> Option<Transition> {
        self.observe_via(c, p, Via::Tick, Known::default())
    }

    /// `observe_asking` where the host cannot tell what it touched.
    pub fn observe_via(
        &mut self,
        c: Counters,
        p: &ModelParams,
        via: Via,
        known: Known,
    ) -> Option<Transition> {
        self.observe_asking(c, p, via, known, &mut touch::unknown)
    }

    /// Takes one sample, taken because the kernel said the context charged
    /// memory (`Via::Fired`) or at a tick; returns the transition it
    /// caused, if any. Resting with its pages in (`known.resident`), a
    /// call is also CPU beyond its own rest's (`rest`), if the memory it
    /// touched says so (`ask`, see `touch`). At a tick, a context polled
    /// between ticks is judged as a poll first.
    pub fn observe_asking(
        &mut self,
        c: Counters,
        p: &ModelParams,
        via: Via,
        known: Known,
        ask: Ask<'_>,
    ) -> Option<Transition> {
        // Polled between ticks, a context's reading is judged first as a
        // poll would judge it, over the span since its last poll: a call
        // whose few ms of CPU came within the ms before the tick is
        // otherwise judged over the tick's whole second (below the
        // threshold there), and the next poll starts from this reading,
        // past it. Learns no rest (this reading does). (bench/faas,
        // session 88: two timer calls 4-7 ms before a tick went unseen, a
        // period was missing from each function's history, and its next
        // call was not predicted: 51 and 55 ms, the run's slowest timer
        // calls.)
        if via == Via::Tick && known.polled {
            if let Some(tr) = self.judge_as_polled(c.at, c.cpu, p, known, ask, false) {
                self.last = Some(c);
                self.poll_ref = Some((c.at, c.cpu));
                return Some(tr);
            }
        }
        let rests = self.rests(c.at);
        let prev = self.last;
        self.judged = prev.map(|l| Judged {
            cpu: c.cpu.saturating_sub(l.cpu),
            span: c.at.saturating_sub(l.at),
            faults: c.pgfault.saturating_sub(l.pgfault),
            major_faults: c.pgmajfault.saturating_sub(l.pgmajfault),
            expected: known.expected,
            touched: None,
        });
        let its_own_charge =
            via == Via::Fired { own: true } && prev.is_none_or(|l| took_its_charge(&l, &c));
        let active = its_own_charge || prev.is_some_and(|l| is_active(&l, &c, &p.thresholds));
        let by_cpu =
            !active && prev.is_some_and(|l| self.is_warm_call(&l, &c, rests && known.resident));
        // (Asked too soon after the last ask, it is left unjudged: no call.)
        let warm = by_cpu && self.confirm(c.at, ask) == Some(true);
        let again = self.busy_call(prev, &c, rests, active, known, ask);
        // Only with its pages in: paged out, its housekeeping refaults on
        // its own CPU (up to 37 ms a second in bench/faas), which would
        // raise the allowance past its calls (`rest`). Nor CPU that
        // touched nothing (`touch`): it would raise it as well. Nor a
        // reading with a major fault: no warm call is judged in one, so a
        // call that read a page or two back from the tier would be learned
        // as rest and raise the allowance over the calls after it.
        let learn = rests && known.resident && !active && !by_cpu;
        if let Some(l) = prev.filter(|l| learn && l.pgmajfault == c.pgmajfault) {
            self.rest
                .learn(c.cpu.saturating_sub(l.cpu), c.at.saturating_sub(l.at));
            self.touches.rest(c.at, ask);
        }
        if active {
            self.touches.did_something();
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
        if again {
            self.remember(now);
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
            _ => return again.then_some(Transition::Call),
        };
        self.state = next;
        self.since = now;
        Some(event)
    }

    /// Busy at `c` (not `rests`: neither idle nor active and quiet),
    /// whether the reading from `prev` holds another call than the last one
    /// recorded: activity, or (its pages in) a warm call's CPU
    /// (`is_warm_call`) that what it touched does not deny (`touch`), after
    /// a reading without either that began after the last call recorded
    /// (`quiet_since_call`). Marks
    /// such a reading.
    fn busy_call(
        &mut self,
        prev: Option<Counters>,
        c: &Counters,
        rests: bool,
        active: bool,
        known: Known,
        ask: Ask<'_>,
    ) -> bool {
        let Some(l) = prev.filter(|_| !rests) else {
            return false;
        };
        let by_cpu = !active && self.is_warm_call(&l, c, known.resident);
        if !active && !by_cpu {
            if self.history.last().is_none_or(|r| l.at >= r) {
                self.quiet_since_call = true;
            }
            return false;
        }
        self.quiet_since_call && (active || self.confirm(c.at, ask) == Some(true))
    }

    /// A call recorded in its history: the next one in a busy stretch
    /// needs a reading without one first (`quiet_since_call`).
    fn remember(&mut self, at: Instant) {
        self.history.record(at);
        self.quiet_since_call = false;
    }

    /// Whether it rests at `now`: idle, or active and quiet.
    fn rests(&self, now: Instant) -> bool {
        self.state == State::Idle || (self.state == State::Active && self.is_quiet(now))
    }

    /// A call of a resting context with its pages in (`judged`): at most
    /// `rest::WARM_CALL_MAJOR_FAULTS` major faults, and more CPU than its
    /// rest uses.
    fn is_warm_call(&self, before: &Counters, after: &Counters, judged: bool) -> bool {
        judged
            && after.pgmajfault.saturating_sub(before.pgmajfault) <= rest::WARM_CALL_MAJOR_FAULTS
            && self.rest.is_call(
                after.cpu.saturating_sub(before.cpu),
                after.at.saturating_sub(before.at),
            )
    }

    /// Whether CPU that says "call" at `at` is one, by what it touched
    /// (`touch`); what the host said is kept with the reading. None: it
    /// was asked less than `touch::ASK_GAP` ago.
    fn confirm(&mut self, at: Instant, ask: Ask<'_>) -> Option<bool> {
        let (call, touched) = self.touches.confirm(at, ask)?;
        if let Some(j) = self.judged.as_mut() {
            j.touched = touched;
        }
        Some(call)
    }

    /// A warm call while it rests: in its history (as seen by CPU alone),
    /// nothing else changes.
    fn warm_call(&mut self, now: Instant) -> Transition {
        self.history.record_by_cpu(now);
        self.quiet_since_call = false;
        Transition::WarmCall
    }

    /// Active, it started again after a quiet stretch: recorded like a wake.
    fn record_onset(&mut self, now: Instant) -> Transition {
        self.remember(now);
        self.onset = Some(now);
        Transition::Onset
    }

    /// Idle → waking: the wake is recorded, and an idle that ended sooner
    /// than it took to judge doubles the idle threshold, unless the history
    /// predicted the wake (a periodic context called on its schedule).
    fn wake(&mut self, now: Instant, p: &ModelParams) -> Transition {
        let on_schedule = self.history.is_on_schedule(now);
        self.remember(now);
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

#[path = "model_between_ticks.rs"]
mod between_ticks;

#[cfg(test)]
#[path = "model_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "model_touch_tests.rs"]
mod touch_tests;
