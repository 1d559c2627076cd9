//! DRAM handed out so far, and the orders it is handed out in: the
//! planner's room, shared among groups of contexts, admitted whole or
//! kept while it lasts (see the order of service in `planner`).

use std::time::Duration;

use super::{demand, fits, rank, resting, runs_now, ContextInput, Queued};
use crate::context::OUT_SWAPPED_BYTES;
use crate::Class;

/// DRAM handed out so far.
pub(super) struct Room {
    pub(super) targets: Vec<u64>,
    pub(super) left: u64,
    pub(super) overcommitted: bool,
}

impl Room {
    /// Gives each context that `which` selects `amount` of it, whether it fits
    /// or not (what does not fit is flagged).
    pub(super) fn give_each(
        &mut self,
        cs: &[ContextInput],
        which: impl Fn(&ContextInput) -> bool,
        amount: impl Fn(&ContextInput) -> u64,
    ) {
        for (i, c) in cs.iter().enumerate().filter(|(_, c)| which(c)) {
            self.targets[i] = amount(c);
            self.overcommitted |= self.targets[i] > self.left;
            self.left = self.left.saturating_sub(self.targets[i]);
        }
    }

    /// Admits queued contexts in wake order: the overdue ones first, sharing
    /// what is left; then each in full while the next fits (and, where its
    /// class serves only so many wakes at once, while fewer of the class
    /// run). Returns which contexts wait (by input index).
    pub(super) fn admit_queued(&mut self, cs: &[ContextInput]) -> Vec<bool> {
        let mut queue: Vec<(Queued, usize)> = (0..cs.len())
            .filter(|&i| cs[i].class == Class::Extend)
            .filter_map(|i| Some((cs[i].queued?, i)))
            .collect();
        queue.sort_by_key(|(q, i)| (q.since, *i));
        let overdue: Vec<usize> = queue
            .iter()
            .filter(|(q, _)| q.overdue)
            .map(|(_, i)| *i)
            .collect();
        self.share(cs, &overdue, demand);
        // Only the extend class queues: one count serves.
        let mut running = cs.iter().filter(|c| runs_now(c)).count() + overdue.len();
        let mut waits = vec![false; cs.len()];
        let mut blocked = false;
        for &(q, i) in queue.iter().filter(|(q, _)| !q.overdue) {
            let slot = q.at_once.is_none_or(|n| running < n as usize);
            // It waits only for room its working set needs; the growth
            // margin on top is given where it fits, never waited for (with
            // the capacity nearly full, waiting for it froze wakes that fit).
            blocked = blocked || !slot || !self.give_whole(&cs[i], i, fits(&cs[i]));
            running += usize::from(!blocked);
            waits[i] = blocked;
        }
        waits
    }

    /// Under admission at the peak, serves the `busy` contexts that run in
    /// turn, in the order their stretches began, each with room for what it
    /// needs (its peak, or all it holds: `fits`), then those in turn up to
    /// their demand where there is more; the first that does not fit, and
    /// every one after it, is out of its turn. Returns which are (by input
    /// index).
    ///
    /// A quiet one (no activity for `ONSET_QUIET`) does not run: it keeps
    /// no room ahead of the queue and is never out of its turn. In
    /// bench/peers' burst cells a container that had re-touched its heap
    /// and slept stayed active (and so busy) until `idle_after`: it kept
    /// room for its 341 MiB peak ahead of the queued wakes, and, out of its
    /// turn as it slept, it was frozen and queued itself: 18-31 such
    /// freezes a run, a freeze lasting a median 21-30 s (session 37).
    pub(super) fn run_in_turn(&mut self, cs: &[ContextInput], busy: &[usize]) -> Vec<bool> {
        let mut order: Vec<usize> = busy
            .iter()
            .copied()
            .filter(|&i| cs[i].in_turn.is_some() && !cs[i].quiet)
            .collect();
        order.sort_by_key(|&i| (cs[i].in_turn, i));
        let mut out = vec![false; cs.len()];
        let mut blocked = false;
        for &i in &order {
            let more = fits(&cs[i]).saturating_sub(self.targets[i]);
            blocked = blocked || more > self.left;
            if !blocked {
                self.targets[i] += more;
                self.left -= more;
            }
            out[i] = blocked;
        }
        // Their growth room after what each needs (given first, the
        // earlier ones' room kept a later one out of its turn).
        order.retain(|&i| !out[i]);
        self.share(cs, &order, demand);
        out
    }

    /// Gives context `i` room for `whole` bytes, and up to its demand
    /// beyond where there is room; nothing if `whole` does not fit.
    /// Whether it did.
    fn give_whole(&mut self, c: &ContextInput, i: usize, whole: u64) -> bool {
        if whole.saturating_sub(self.targets[i]) > self.left {
            return false;
        }
        let give = demand(c)
            .max(whole)
            .saturating_sub(self.targets[i])
            .min(self.left);
        self.targets[i] += give;
        self.left -= give;
        true
    }

    /// Serves the prefetched contexts (rank 1), soonest expected wake first,
    /// each with room for its whole working set (and its growth margin
    /// where there is room) or with nothing beyond its floor. Returns which
    /// were served (by input index): only those are brought back.
    pub(super) fn prefetch_whole(&mut self, cs: &[ContextInput]) -> Vec<bool> {
        let mut served = vec![false; cs.len()];
        for i in soonest_first(cs, |c| rank(c) == 1) {
            // A read-back brings in all it has in swap, working set or not.
            let whole = fits(&cs[i]).max(cs[i].usage.saturating_add(cs[i].swapped));
            served[i] = self.give_whole(&cs[i], i, whole);
        }
        served
    }

    /// Lets resting `keep_while_room` contexts keep what they hold (and a
    /// little slack) out of what is left beyond `reserve`, the most valuable
    /// first (`most_valuable_first`). Returns that order (by input index).
    ///
    /// One with pages out keeps what it holds but no slack: its next call
    /// faults whatever it holds, and is served as a wake. (Given while
    /// there was room and taken back by the next wake's plan, that slack
    /// had bench/faas' pushed-out functions' limits written between 4.0
    /// and 4.4 MiB, dozens at each wake; until each was down again its
    /// function was polled rather than watched by its kernel event, and a
    /// quarter of the calls' wakes were seen by a poll, 25-28 ms after the
    /// call against 3-5 ms by an event: session 39.)
    pub(super) fn keep_resting(&mut self, cs: &[ContextInput], reserve: u64) -> Vec<usize> {
        let mut spare = self.left.saturating_sub(reserve);
        let order = most_valuable_first(cs, |c| c.keep_while_room && resting(c));
        for &i in &order {
            let slack = if cs[i].swapped >= OUT_SWAPPED_BYTES {
                0
            } else {
                cs[i].rest_slack
            };
            let want = cs[i]
                .usage
                .saturating_add(slack)
                .saturating_sub(self.targets[i]);
            let give = want.min(spare);
            self.targets[i] += give;
            spare -= give;
            self.left -= give;
        }
        order
    }

    /// Reads back resting `keep_while_room` contexts with pages out (and a
    /// next call expected), the most valuable first, each whole, out of what
    /// is left beyond `reserve`: never at the cost of what another keeps.
    /// Returns which (by input index).
    pub(super) fn refill(&mut self, cs: &[ContextInput], reserve: u64) -> Vec<bool> {
        let mut refilled = vec![false; cs.len()];
        let candidates = most_valuable_first(cs, |c| {
            c.keep_while_room
                && resting(c)
                && c.swapped >= OUT_SWAPPED_BYTES
                && c.expected_wake_in.is_some()
        });
        for i in candidates {
            let whole = cs[i]
                .usage
                .saturating_add(cs[i].swapped)
                .saturating_add(cs[i].rest_slack)
                .saturating_sub(self.targets[i]);
            if whole <= self.left.saturating_sub(reserve) {
                self.targets[i] += whole;
                self.left -= whole;
                refilled[i] = true;
            }
        }
        refilled
    }

    /// Serves `group` up to `amount` each, above what each has: in full if
    /// it fits, else in proportion to what each still needs.
    pub(super) fn share(
        &mut self,
        cs: &[ContextInput],
        group: &[usize],
        amount: impl Fn(&ContextInput) -> u64,
    ) {
        let want: Vec<u64> = group
            .iter()
            .map(|&i| amount(&cs[i]).saturating_sub(self.targets[i]))
            .collect();
        let total: u64 = want.iter().sum();
        if total == 0 {
            return;
        }
        if total <= self.left {
            for (&i, &w) in group.iter().zip(&want) {
                self.targets[i] += w;
            }
            self.left -= total;
            return;
        }
        let share = self.left;
        for (&i, &w) in group.iter().zip(&want) {
            let give =
                u64::try_from(u128::from(share) * u128::from(w) / u128::from(total)).unwrap_or(0);
            self.targets[i] += give;
            self.left -= give;
        }
    }
}

/// The extend contexts of rank `r` (queued ones aside), by input index.
pub(super) fn of_rank(cs: &[ContextInput], r: u8) -> Vec<usize> {
    (0..cs.len())
        .filter(|&i| cs[i].class == Class::Extend && rank(&cs[i]) == r && cs[i].queued.is_none())
        .collect()
}

/// The extend contexts (not queued) that `which` selects, by input index,
/// the soonest expected wake first (unknown last).
fn soonest_first(cs: &[ContextInput], which: impl Fn(&ContextInput) -> bool) -> Vec<usize> {
    let mut order: Vec<usize> = (0..cs.len())
        .filter(|&i| cs[i].class == Class::Extend && cs[i].queued.is_none() && which(&cs[i]))
        .collect();
    order.sort_by_key(|&i| (cs[i].expected_wake_in.unwrap_or(Duration::MAX), i));
    order
}

/// The extend contexts (not queued) that `which` selects, by input index,
/// in the order of the time to their expected next wake times their whole
/// size, what they hold and what they have out (unknown last): of two
/// contexts called as often, the smaller is kept first; of two as large,
/// the one called sooner. (By what it held, a function paged out in part
/// looked small and kept its part, which does not make its call warm.)
fn most_valuable_first(cs: &[ContextInput], which: impl Fn(&ContextInput) -> bool) -> Vec<usize> {
    let cost = |c: &ContextInput| {
        c.expected_wake_in.map_or(u128::MAX, |d| {
            d.as_millis() * u128::from(c.usage.saturating_add(c.swapped).max(1))
        })
    };
    let mut order: Vec<usize> = (0..cs.len())
        .filter(|&i| cs[i].class == Class::Extend && cs[i].queued.is_none() && which(&cs[i]))
        .collect();
    order.sort_by_key(|&i| (cost(&cs[i]), i));
    order
}
