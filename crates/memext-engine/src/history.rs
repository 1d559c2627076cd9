//! Activation history of a context, and the two predictions made from it:
//! a context that wakes periodically will wake again one period after its last
//! wake; a context that usually wakes right after another one will wake when
//! that one does.

use std::collections::VecDeque;
use std::time::Duration;

use crate::Instant;

mod following;
mod foretold;
#[cfg(test)]
use following::binomial_tail;
pub use following::{following, Following};
pub use foretold::Foretold;

/// How many wakes are remembered.
const KEEP: usize = 32;
/// Intervals needed before a period is believed: one (two calls) is taken
/// for a period until an interval disagrees. A timer's third call is then
/// read back ahead of it instead of its fourth (bench/faas: 30 timers of
/// 15-60 s in a 180 s trace, so a third call each is a tenth of the
/// calls); a Poisson function's second interval falls within
/// `PERIOD_TOLERANCE` of its first one time in ten, so each such function
/// costs about one read-back for nothing. Replayed on the trace
/// generator's seeds 1-10 (`bench/faas/bound.py`, calls within 3 s
/// merged), memext's keep order made 10-32 more calls warm a trace with
/// one interval than with two (22-27 more timer calls, 2-9 fewer Poisson
/// ones); in three rotated pairs of bench/faas runs, 277-285 warm calls
/// against 252-260 and a p50 of 8-10 ms against 28-36. Beside a critical
/// context (bench/peers, PostgreSQL and noise containers that wake on
/// timers or at random) 0-3 such read-backs came a run, and the critical
/// workload's throughput and p99 stayed within the spread of runs
/// without them (docs/faas/s67-2026-12-04).
const MIN_INTERVALS: usize = 1;
/// How far each recent interval may stray from their median.
const PERIOD_TOLERANCE: f64 = 0.2;
/// Irregular wakes a schedule may have among its recent ones, counted in
/// halves: an unseen wake counts two, an extra one one (see `chain`), so
/// that two unseen or four extra are allowed (see `schedule`).
const MAX_IRREGULAR_HALVES: usize = 4;
/// Wakes that may go unseen in a row (see `chain`).
const MAX_UNSEEN_IN_ONE: u32 = 2;
/// Wakes a schedule rests on before a call missing from it is passed over
/// (`expected_call`): read from fewer, a random function's two or three
/// calls were due for nothing half as often again (see there).
const ROLL_MIN_WAKES: usize = 4;
/// Wakes recorded within this long after one are read as the same one by
/// `schedule`: one call can be recorded two or three times (a warm call
/// seen by a poll, its CPU seen again at the tick, an onset a second
/// later), and a held context's runtime can be taken for its call a
/// second or two before the call (bench/faas, a timer of 16.4 s: wakes
/// recorded 0.11 and 1.11 s after its call, and one 3 s after the next,
/// used up the irregular wakes its schedule may have: none of its seven
/// calls after them was predicted). Replayed on 18 bench/faas runs'
/// recorded wakes, collapsing within 2-3 s predicted 30-32 more timer
/// calls (of 1,692) and 4-5 more for nothing; measured, 6-9 of a run's 94
/// predictable timer calls took over 25 ms against 7-24
/// (docs/faas/ab-2026-11-26-s27).
const SAME_WAKE_WITHIN: Duration = Duration::from_secs(3);

/// Wakes added to those a context has had when its rate is read for its
/// expected next wake (`ActivationHistory::expected_wake_in`): with a few
/// wakes, the mean interval says little (the mean of two or three
/// intervals of a Poisson function misses its mean by half or more 37-46%
/// of the time), so the guess goes mostly by how lately it woke, its rate
/// counting only for one called often. The keep order weighs each
/// resting function by that guess times its size. Replayed on the trace
/// generator's seeds 1-10 (`bench/faas/bound.py`'s keep order with the
/// engine's rule for functions called within 2 s), against the guess
/// until session 87 (the mean interval, never less than the time since
/// the last wake): 98-229 more calls warm over the ten traces of each of
/// four trace shapes of 180-360 s (timer / Poisson / bursty mixes,
/// rates) and 778 more in 600 s ones; 16 more of bench/faas' 535 on its
/// seed 1. Three, five and ten wakes added made 160, 185 and 211 more on
/// the default shape (docs/faas/s87-2026-12-07).
const RATE_PRIOR_WAKES: u32 = 10;

/// Wakes not seen by CPU alone a schedule read from them alone needs at
/// least (two intervals that agree), where all the wakes make none.
const MIN_SURE_WAKES: usize = 3;

#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ActivationHistory {
    wakes: VecDeque<Instant>,
    /// Those of `wakes` seen by CPU alone (`record_by_cpu`).
    #[serde(default)]
    by_cpu: VecDeque<Instant>,
    /// Calls known ahead (`foretold`, an analysis setting): they stand for
    /// the schedule and the rate. Not saved.
    #[serde(skip)]
    foretold: Option<Foretold>,
}

impl ActivationHistory {
    pub fn record(&mut self, at: Instant) {
        let Some(&last) = self.wakes.back() else {
            self.wakes.push_back(at);
            return;
        };
        if at <= last {
            return; // time never goes back; a duplicate is ignored
        }
        // A precursor whose call comes too long after it to be read as one
        // wake with it (`distinct_wakes`) was not the call: the call
        // replaces it, where nearer to when it was due.
        if let Some((due, _)) = self.precursor(at) {
            if at - last >= SAME_WAKE_WITHIN && at.abs_diff(due) < last.abs_diff(due) {
                self.wakes.pop_back();
            }
        }
        if self.wakes.len() == KEEP {
            self.wakes.pop_front();
        }
        self.wakes.push_back(at);
    }

    /// A wake seen by its CPU alone: a resting context's warm call, told
    /// from its runtime's bursts by nothing else (`rest`). About 40% of
    /// those recorded in a bench/faas run were no call (31-35 of 73-81 a
    /// run, docs/faas/s74-2026-12-06), and among a timer's calls they
    /// break its schedule: fn0014, a 35 s timer, had four between its first
    /// three calls, was never read as periodic, and its next three calls
    /// came cold. Where all the wakes make no schedule, the others alone
    /// may (`schedule_in`).
    pub fn record_by_cpu(&mut self, at: Instant) {
        let before = self.last();
        self.record(at);
        if self.last() == Some(at) && before != Some(at) {
            self.by_cpu.push_back(at);
        }
        let wakes = &self.wakes;
        self.by_cpu.retain(|t| wakes.contains(t));
    }

    /// From now on the next wake is the next of these calls (`Foretold`).
    pub fn foretell(&mut self, calls: Foretold) {
        self.foretold = Some(calls);
    }

    /// Whether calls known ahead stand for the prediction (`foretell`).
    pub fn is_foretold(&self) -> bool {
        self.foretold.is_some()
    }

    pub fn last(&self) -> Option<Instant> {
        self.wakes.back().copied()
    }

    pub fn count(&self) -> usize {
        self.wakes.len()
    }

    /// How many of the wakes were seen by CPU alone (`record_by_cpu`).
    pub fn count_by_cpu(&self) -> usize {
        self.by_cpu.len()
    }

    pub fn wakes(&self) -> impl Iterator<Item = Instant> + '_ {
        self.wakes.iter().copied()
    }

    /// The period of a context that wakes regularly (see `schedule`).
    pub fn period(&self) -> Option<Duration> {
        self.schedule().map(|(_, period)| period)
    }

    /// When the next wake is expected at `now`, for a periodic context: one
    /// period after the last wake on its schedule (see `next_and_period`).
    pub fn next_wake(&self, now: Instant) -> Option<Instant> {
        self.next_and_period(now).map(|(next, _)| next)
    }

    /// The next wake and the period at `now`, from one reading of the
    /// schedule; while a call's precursor stands (`precursor`), the call
    /// it came before.
    pub fn next_and_period(&self, now: Instant) -> Option<(Instant, Duration)> {
        if let Some(f) = &self.foretold {
            return f.next_and_period(now);
        }
        if let Some(due) = self.precursor(now) {
            return Some(due);
        }
        self.schedule().map(|(on, period)| (on + period, period))
    }

    /// The call to expect at `now` and the period (`next_and_period`);
    /// where `now` is more than half a period past it, on a schedule of at
    /// least `ROLL_MIN_WAKES` wakes, the one after it that `now` is not
    /// (up to `MAX_UNSEEN_IN_ONE` unseen in a row, as `chain` reads them):
    /// a call that went unseen does not leave the next one unpredicted.
    /// (bench/faas, session 88: two timer calls unseen at a tick, their
    /// functions due for nothing more and their next calls cold, 51 and
    /// 55 ms. Replayed on 18 runs' recorded wakes, timer calls from the
    /// fourth due ahead: 1,644 of 1,692 against 1,637; due for nothing 24
    /// timer, 360 Poisson, 72 bursty episodes against 24, 344, 68; from
    /// two wakes on, 25, 531 and 128.)
    pub fn expected_call(&self, now: Instant) -> Option<(Instant, Duration)> {
        let (mut due, period) = self.next_and_period(now)?;
        if self.foretold.is_none() && self.wakes.len() >= ROLL_MIN_WAKES {
            for _ in 0..MAX_UNSEEN_IN_ONE {
                if now <= due + period / 2 {
                    break;
                }
                due += period;
            }
        }
        Some((due, period))
    }

    /// Whether the last wake recorded is, at `now`, a call's precursor
    /// (`precursor`): the call it came before is still to come.
    pub fn awaits_call(&self, now: Instant) -> bool {
        if let Some(f) = &self.foretold {
            return !f.is_a_call(now);
        }
        self.precursor(now).is_some()
    }

    /// A wake recorded within `precursor_within` before the call its
    /// schedule had due, with nothing recorded since, is not taken for
    /// that call until `SAME_WAKE_WITHIN` after the call was due: a call
    /// recorded by then stands for it (`record`, `distinct_wakes`); if none
    /// came, it was the call, early. Returns that call and the period while
    /// it stands. (bench/faas: a held function's runtime, its pages just
    /// read and mapped back, used 0.6-1.4 ms in a 20-47 ms poll 0.3-2.4 s
    /// before its call, or a tick saw more than its rest; taken for the
    /// call, it moved the schedule a period on, the hold ended, and the
    /// function was lowered or pushed out as its call came. Replayed on 30
    /// runs of sessions 26-27, timer calls due and then no longer due
    /// before they came fell from 176 to 20; docs/faas/ab-2026-11-26-s28.
    /// Such records also came 3-5 s before calls of periods of 16-53 s, 20
    /// in 18 runs of sessions 69-71, and the functions were pushed out
    /// before their calls: a fifth of the period, the schedule's
    /// tolerance, is the window where that is longer than 3 s; a wake
    /// further before is an extra one, skipped by the schedule.)
    fn precursor(&self, now: Instant) -> Option<(Instant, Duration)> {
        if self.foretold.is_some() {
            return None;
        }
        let n = self.wakes.len();
        let (&last, &before) = (
            self.wakes.get(n.checked_sub(1)?)?,
            self.wakes.get(n.checked_sub(2)?)?,
        );
        if last - before < SAME_WAKE_WITHIN {
            return None;
        }
        let (on, period) = self.schedule_in(n - 1)?;
        let due = on + period;
        let within = precursor_within(period);
        (last < due && due - last <= within && now < due + SAME_WAKE_WITHIN)
            .then_some((due, period))
    }

    /// The last wake on a regular schedule and its period, from the last
    /// (up to 8) intervals: their median, if every one is within 20% of it.
    /// Failing that, the wakes are read as a schedule with irregularities
    /// (`chain`): at most two unseen wakes or four extra ones, and an unseen
    /// one per three intervals kept (an extra one per one and a half), the
    /// intervals kept agreeing as above. Without them, one extra wake kept
    /// a timer unpredicted for eight of its calls (bench/faas: a function's
    /// warm call seen 7 s after its call on a 16.5 s timer, calls 7-11 all
    /// cold), and so did one call that went unseen. An extra wake counts
    /// half an unseen one: its interval is left out, not made up, and a
    /// timer's function is called besides its timer or its runtime taken
    /// for a call more often than a call goes unseen. Replayed on 30
    /// bench/faas runs of sessions 26-27, counted as one it predicted 2,555
    /// timer calls and 153 calls that did not come; as half, 2,636 and 161
    /// (on 66 runs of sessions 20-25, 5,746 and 289 against 5,857 and 322;
    /// docs/faas/ab-2026-11-26-s28).
    fn schedule(&self) -> Option<(Instant, Duration)> {
        self.schedule_in(self.wakes.len())
    }

    /// The schedule of the first `n` wakes; where they make none, that of
    /// those among them not seen by CPU alone, if there are
    /// `MIN_SURE_WAKES` distinct ones.
    fn schedule_in(&self, n: usize) -> Option<(Instant, Duration)> {
        let first = || self.wakes.range(..n.min(self.wakes.len())).copied();
        schedule_of(first()).or_else(|| {
            if self.by_cpu.is_empty() {
                return None; // the same wakes: read already
            }
            let sure = distinct_wakes(first().filter(|w| !self.by_cpu.contains(w)));
            (sure.len() >= MIN_SURE_WAKES)
                .then(|| schedule_of(sure.into_iter()))
                .flatten()
        })
    }

    /// Whether a wake at `at` is the one a periodic history predicts: within
    /// the period's tolerance of when it was due.
    pub fn is_on_schedule(&self, at: Instant) -> bool {
        let Some((next, period)) = self.next_and_period(at) else {
            return false;
        };
        let off = at.abs_diff(next);
        off.as_secs_f64() <= PERIOD_TOLERANCE * period.as_secs_f64()
    }

    /// How long until the next wake is to be expected at `now`: until it is
    /// due for a periodic context (zero once overdue, up to half a period
    /// late). Else a guess led by how lately it woke: half the time since
    /// its last wake, and no less than the time since its oldest remembered
    /// wake spread over the wakes after it plus `RATE_PRIOR_WAKES` (see
    /// there). Called once, the time it has been watched (since
    /// `watched_since`): a context called once stands behind one called
    /// every few seconds, and one that stopped falls behind. The time
    /// watched before its first call does not count once it has been
    /// called twice: a function started long before its calls began is
    /// not taken for a rare one. (bench/faas watches its functions 20-71 s
    /// before its trace begins, median about 45 s: counted, that made a
    /// function called at a steady rate look almost twice as rare 50 s
    /// into the trace, while a timer's due time does not depend on it.)
    /// None without wakes.
    pub fn expected_wake_in(&self, now: Instant, watched_since: Instant) -> Option<Duration> {
        if let Some(f) = &self.foretold {
            return Some(f.expected_wake_in(now));
        }
        // Overdue by more than half a period (past the calls that may have
        // gone unseen: `expected_call`), the period failed (or was a
        // chance match, or one interval's guess): the rate speaks instead,
        // so that it is not kept first for good.
        if let Some((next, period)) = self.expected_call(now) {
            if now <= next + period / 2 {
                return Some(next.saturating_sub(now));
            }
        }
        let (oldest, last) = (*self.wakes.front()?, self.last()?);
        let since_last = now.saturating_sub(last);
        match u32::try_from(self.wakes.len() - 1).ok()? {
            0 => Some(
                now.saturating_sub(watched_since.min(oldest))
                    .max(since_last),
            ),
            after => {
                Some((now.saturating_sub(oldest) / (after + RATE_PRIOR_WAKES)).max(since_last / 2))
            }
        }
    }
}

/// How long before a due call a wake is taken for its precursor:
/// `SAME_WAKE_WITHIN`, or the period's tolerance where that is longer.
fn precursor_within(period: Duration) -> Duration {
    SAME_WAKE_WITHIN.max(period.mul_f64(PERIOD_TOLERANCE))
}

/// `ActivationHistory::schedule` of the wakes recorded at `wakes`, in order.
fn schedule_of(wakes: impl Iterator<Item = Instant>) -> Option<(Instant, Duration)> {
    schedule_read_at(wakes, candidate_periods)
}

/// `schedule_of`, a schedule with irregular wakes read at the periods
/// `periods` gives from its recent intervals and their median.
fn schedule_read_at(
    wakes: impl Iterator<Item = Instant>,
    periods: fn(&[Duration], Duration) -> Vec<Duration>,
) -> Option<(Instant, Duration)> {
    let wakes = distinct_wakes(wakes);
    let n = wakes.len();
    if n < MIN_INTERVALS + 1 {
        return None;
    }
    let recent = &wakes[n.saturating_sub(9)..];
    let intervals: Vec<Duration> = recent.windows(2).map(|w| w[1] - w[0]).collect();
    let median = median(&intervals)?;
    if agree(&intervals, median) {
        return Some((*recent.last()?, median));
    }
    // Chains that start at one of the first wakes (those before count as
    // unseen), read at each period a recent interval suggests; the fewest
    // irregular, the median's first.
    periods(&intervals, median)
        .into_iter()
        .flat_map(|period| (0..recent.len().min(3)).map(move |start| (period, start)))
        .filter_map(|(period, start)| {
            let (halves, on, kept) = chain(&recent[start..], period);
            let halves = halves + 2 * start;
            // Read at a longer interval, a schedule needs more evidence.
            if period != median && kept.len() < LONGER_KEPT.max(2 * halves) {
                return None;
            }
            Some((halves, on, median_of_agreeing(&kept, halves)?))
        })
        .min_by_key(|&(halves, ..)| halves)
        .map(|(_, on, period)| (on, period))
}

/// Intervals a schedule read at a longer interval than the median keeps at
/// least (and twice its irregular halves): random calls read so at three
/// intervals and no more asked, 474 of 5,000 Poisson histories had a
/// schedule against 342 at the median (`history_tests.rs`); at four and
/// twice the halves, 348.
const LONGER_KEPT: usize = 4;

/// The periods a schedule with irregular wakes is read at: the median of
/// its intervals, then each longer interval, shortest first. Extra wakes
/// cut intervals short and pull the median under the period: a 16.3 s
/// timer of bench/faas (fn0026, session 69) with two wakes recorded 3-5 s
/// before calls among seven intervals had a median of 13.0 s, at which no
/// chain held, and went unpredicted (cold at nearly every call); read at
/// 16.3 s its two extra wakes are skipped.
fn candidate_periods(intervals: &[Duration], median: Duration) -> Vec<Duration> {
    let mut longer: Vec<Duration> = intervals.iter().copied().filter(|&d| d > median).collect();
    longer.sort();
    longer.dedup();
    std::iter::once(median).chain(longer).collect()
}

/// Reads `wakes` as a schedule of about `period` from its first: a wake
/// that comes too soon after the last one kept is an extra one, skipped (a
/// call besides the timer's, or activity taken for one); an interval of two
/// or three periods (within the tolerance of one) holds wakes that went
/// unseen (a warm call that was not seen), kept as one
/// interval of its share. Returns the irregular wakes in halves (an extra
/// one one, an unseen one two), the last wake kept and the intervals kept.
fn chain(wakes: &[Instant], period: Duration) -> (usize, Instant, Vec<Duration>) {
    let p = period.as_secs_f64();
    let mut on = wakes[0];
    let (mut halves, mut kept) = (0, Vec::new());
    for &t in &wakes[1..] {
        let d = (t - on).as_secs_f64();
        if d < (1.0 - PERIOD_TOLERANCE) * p {
            halves += 1;
            continue;
        }
        // The whole number of periods nearest the interval.
        let k = (1..=MAX_UNSEEN_IN_ONE + 1)
            .min_by(|&a, &b| {
                (d - f64::from(a) * p)
                    .abs()
                    .total_cmp(&(d - f64::from(b) * p).abs())
            })
            .unwrap_or(1);
        if k > 1 && (d - f64::from(k) * p).abs() <= PERIOD_TOLERANCE * p {
            halves += 2 * (k - 1) as usize;
            kept.push(Duration::from_secs_f64(d / f64::from(k)));
        } else {
            kept.push(t - on);
        }
        on = t;
    }
    (halves, on, kept)
}

/// `wakes` with each one recorded within `SAME_WAKE_WITHIN` after an
/// earlier one kept left out: of each such group, the one nearest to the
/// median of the (last eight) intervals before it after the last one kept
/// stands for it (the first, before there is an interval). The first stood for each before, and where a
/// precursor (`ActivationHistory::precursor`) was followed by its call
/// within 3 s, 166 times in 18 bench/faas runs of sessions 69-71 (1-3 s
/// before the call), the schedule went on from it: the next call due up to
/// 3 s early, the function read back that much earlier, and a record of
/// its runtime 3-5 s before that call taken for it. Replayed on those
/// runs' recorded wakes (`examples/replay_wakes.rs`), timer calls from
/// the fourth due from before they came: 1,623 of 1,692 with this alone
/// against 1,613; 1,642 with the precursor's window and `record` as well,
/// due for nothing 26 times against 40 (Poisson functions' 329 against
/// 313); in six rotated pairs of bench/faas runs, as many timer calls
/// from the fourth over 16 ms as before (30 against 31), every figure
/// within the spread (docs/faas/s72-2026-12-05).
fn distinct_wakes(wakes: impl Iterator<Item = Instant>) -> Vec<Instant> {
    let mut out: Vec<Instant> = Vec::with_capacity(KEEP);
    let mut first: Option<Instant> = None;
    for w in wakes {
        match first {
            Some(f) if w - f < SAME_WAKE_WITHIN => {
                let Some((rep, before)) = out.split_last_mut() else {
                    continue;
                };
                let nearer =
                    expected_after(before).is_some_and(|due| w.abs_diff(due) < rep.abs_diff(due));
                if nearer {
                    *rep = w;
                }
            }
            _ => {
                first = Some(w);
                out.push(w);
            }
        }
    }
    out
}

/// One median interval after the last of `wakes`.
fn expected_after(wakes: &[Instant]) -> Option<Instant> {
    let recent = &wakes[wakes.len().saturating_sub(9)..];
    let intervals: Vec<Duration> = recent.windows(2).map(|w| w[1] - w[0]).collect();
    Some(*wakes.last()? + median(&intervals)?)
}

/// The median of `d` (the upper one of an even count); None if empty or zero.
fn median(d: &[Duration]) -> Option<Duration> {
    let mut sorted = d.to_vec();
    sorted.sort();
    let m = *sorted.get(sorted.len() / 2)?;
    (!m.is_zero()).then_some(m)
}

/// Whether every interval is within the tolerance of `median`.
fn agree(intervals: &[Duration], median: Duration) -> bool {
    let m = median.as_secs_f64();
    intervals
        .iter()
        .all(|d| (d.as_secs_f64() - m).abs() <= PERIOD_TOLERANCE * m)
}

/// The period of a chain with irregular wakes (`halves`, see `chain`):
/// enough intervals kept for them (three for each unseen wake), all agreeing.
fn median_of_agreeing(kept: &[Duration], halves: usize) -> Option<Duration> {
    if kept.len() < MIN_INTERVALS || halves > MAX_IRREGULAR_HALVES || 3 * halves > 2 * kept.len() {
        return None;
    }
    let m = median(kept)?;
    agree(kept, m).then_some(m)
}

#[cfg(test)]
#[path = "history_tests.rs"]
mod tests;
