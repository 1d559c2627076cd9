//! The DRAM planner: a pure function from what memext knows about every
//! selected context and the capacity it may fill to a DRAM target per context
//! and the actions that move toward them.
//!
//! Order of service: critical contexts get their working set plus headroom
//! first, always; every extend context gets at least its floor; what remains
//! goes to waking contexts (the engine passes an onset as one until it
//! settles), then to prefetched ones (each whole or not at
//! all: a working set read back into less room than it needs is reclaimed
//! again at its own limit before it is used), then to active ones, and what
//! is still left is split among the active ones. Idle extend contexts are held at
//! their floor. Critical contexts are never pushed out or
//! limited; when one shows pressure, page-out and prefetch are throttled.
//!
//! On a host meant to be full (`push_out = "when-needed"`), a context
//! between two calls (idle, or active and quiet) *rests*: it keeps what it
//! holds while there is room, the most valuable first (its soonest expected
//! call per byte of its whole size, what it holds and what it has out);
//! waking and busy contexts get what they have before that and their room
//! to grow after it; and DRAM still free beyond a small reserve is
//! refilled: the most valuable resting contexts with pages out are read
//! back whole ahead of their next call.
//!
//! Admission: a context that wakes under admission control is queued. Queued
//! contexts are admitted in the order they woke, each only when its whole
//! working set fits (its growth margin is given where there is room, not
//! waited for); the rest wait (frozen, at their floor) behind the first
//! that does not fit, so that contexts whose working sets together do not fit
//! run one after another instead of all at once, each faulting the others'
//! pages out (and taking the CPU that the critical ones need). One that has
//! waited its longest is admitted anyway, with a share of what is left.
//! Under admission at the peak (`admit_at_peak`), an onset queues too, and
//! what a queued context waits for is room for its peak (the most it had
//! in its last stretch of activity), which it keeps, once admitted, ahead
//! of the queue while it runs. The busy ones run in turn: in the order
//! their stretches began, each with room for its peak or what it has;
//! the first the room no longer holds, and those after it, wait frozen,
//! queued behind the others (a job whose peak is not known yet grows
//! until the room does not hold it and the newer ones).

use std::time::Duration;

use crate::model::State;
use crate::predict::PrefetchReason;
use crate::{Class, ContextId, Instant};

/// Room an active extend context gets above its current use, at most (and
/// until its own growth is learned: `crate::growth`).
pub const GROWTH_BYTES: u64 = 32 << 20;
/// A context within this much of its target is not pushed out.
pub const PUSH_SLACK_BYTES: u64 = 8 << 20;
/// What a resting context that keeps what it holds is given above it, at
/// most (and until learned from its own growth at rest: `crate::growth`):
/// room for its next call's first allocations until its onset is served
/// (polls are 20 ms apart). (At the push-out slack, 8 MiB for each function
/// it kept, a bench/faas host held a mean 1089 MiB of its 1705 MiB cap; at
/// 2 MiB, 1416 MiB.)
pub const REST_SLACK_BYTES: u64 = 2 << 20;
/// Idle contexts that keep what they hold while there is room leave this
/// share of the capacity free (at least `GROWTH_BYTES`): the next wake
/// starts into free DRAM instead of waiting for a push-out.
pub const KEEP_RESERVE_DIV: u64 = 32;
/// And at most this share, where a larger context would wake into it.
pub const KEEP_RESERVE_MAX_DIV: u64 = 16;

/// The room resting contexts leave free by default: room for the largest
/// context that keeps what it holds while there is room (all it holds and
/// has out) to wake into, between `KEEP_RESERVE_DIV` of the capacity (at
/// least `GROWTH_BYTES`) and `KEEP_RESERVE_MAX_DIV` of it. A cold call
/// read back into free room takes a third of what it takes read back into
/// a parent at its cap, where each page read back is paid for by one
/// reclaimed (`memext-e2e coldcall`: 38 against 114 ms for 64 MiB on zram).
/// In bench/faas (this rule keeps 91-99 MiB; 1/32 of the cap is 53), 96
/// MiB kept free with the reclaimer yielding to read-backs lowered the
/// cold calls' median by 8-21 ms and the p99 in each of six pairs
/// (docs/faas/HISTORY.md, session 53).
pub fn default_reserve(input: &PlanInput) -> u64 {
    let least = (input.capacity / KEEP_RESERVE_DIV).max(GROWTH_BYTES);
    let largest = input
        .contexts
        .iter()
        .filter(|c| c.class == Class::Extend && c.keep_while_room)
        .map(|c| c.usage.saturating_add(c.swapped))
        .max()
        .unwrap_or(0);
    largest
        .min(input.capacity / KEEP_RESERVE_MAX_DIV)
        .max(least)
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ContextInput {
    pub key: ContextId,
    pub class: Class,
    pub state: State,
    /// Bytes charged to the context now (resident, including its page cache).
    pub usage: u64,
    /// Bytes of its recorded working set (0 when none is recorded).
    pub working_set: u64,
    /// Bytes it has in swap.
    pub swapped: u64,
    pub floor: u64,
    pub headroom_pct: u8,
    /// Pressure (PSI) or major faults seen in this context.
    pub under_pressure: bool,
    pub prefetch: Option<PrefetchReason>,
    /// Woke and waits for admission (None: not queued).
    pub queued: Option<Queued>,
    /// Idle, it keeps what it holds while the capacity has room for it, and
    /// is pushed out only as far as the room requires (`push_out =
    /// "when-needed"`), instead of going to its floor when it goes idle.
    pub keep_while_room: bool,
    /// Active, but no activity seen for a while (`ONSET_QUIET`), or, on a
    /// host meant to be full, its call over (`ContextState::call_ended`,
    /// given as active): between two calls, not in one.
    pub quiet: bool,
    /// How long until its next wake is expected (None: no history): of the
    /// contexts that keep what they hold, those whose next wake per byte
    /// of their whole size is soonest are kept first.
    pub expected_wake_in: Option<Duration>,
    /// The room it gets above what it has while it runs: learned from how
    /// fast it grew (`crate::growth`), `GROWTH_BYTES` until then.
    pub growth: u64,
    /// The room it keeps above what it holds while it rests: learned from
    /// how fast it grew at rest (`crate::growth`), `REST_SLACK_BYTES` until
    /// then.
    pub rest_slack: u64,
    /// Under admission at the peak, the most it had in a stretch of
    /// activity (`crate::peak`; 0: not admitted at its peak): a queued
    /// context waits for room for it, and one that runs keeps it.
    pub peak: u64,
    /// Under admission at the peak, when its current stretch of activity
    /// began (None: not admitted at its peak): busy contexts run in that
    /// order, each with room for what it needs, and those the room no
    /// longer holds wait for their turn.
    pub in_turn: Option<Instant>,
}

/// A waking context's place in the admission queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Queued {
    /// When it woke: the queue's order.
    pub since: Instant,
    /// It has waited as long as its class allows: admitted, fit or not.
    pub overdue: bool,
    /// At most this many contexts of its class are served a wake at once
    /// (None: as many as fit): while a critical context runs, its class's
    /// `wakes_at_once`.
    pub at_once: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PlanInput {
    /// DRAM the selected contexts may use together.
    pub capacity: u64,
    pub contexts: Vec<ContextInput>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum Action {
    /// Push an extend context (idle, or active above its target) out until
    /// `keep` bytes remain.
    PushOut { key: ContextId, keep: u64 },
    /// Bring a context's working set back from the slower tiers.
    BringBack {
        key: ContextId,
        reason: PrefetchReason,
    },
    /// Cap an extend context at `bytes` (v1 limit_in_bytes, v2 memory.high).
    Limit { key: ContextId, bytes: u64 },
    /// Guarantee a critical context `bytes` (v2 memory.min; on v1 the limits
    /// of the others keep the room).
    Protect { key: ContextId, bytes: u64 },
    /// Keep a queued waking context waiting (frozen) at its floor.
    Wait { key: ContextId },
}

impl Action {
    pub fn key(&self) -> &ContextId {
        match self {
            Action::PushOut { key, .. }
            | Action::BringBack { key, .. }
            | Action::Limit { key, .. }
            | Action::Protect { key, .. }
            | Action::Wait { key } => key,
        }
    }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Plan {
    /// DRAM target per context, in input order.
    pub targets: Vec<u64>,
    pub actions: Vec<Action>,
    /// A critical context is under pressure: page-out and prefetch slow down.
    pub throttle: bool,
    /// Critical demand plus the extend floors exceed the capacity.
    pub overcommitted: bool,
    /// Where the room went, and the resting contexts kept in part.
    pub room: RoomAccount,
}

pub fn plan(input: &PlanInput) -> Plan {
    plan_keeping(input, default_reserve(input))
}

/// `plan`, with resting contexts leaving `reserve` bytes free (at most
/// half the capacity) instead of the default share.
pub fn plan_keeping(input: &PlanInput, reserve: u64) -> Plan {
    let reserve = reserve.min(input.capacity / 2);
    // No class admits at the peak (the default): nothing to bound, and no
    // extra pass over every context at every tick.
    if input.contexts.iter().all(|c| c.peak == 0) {
        return plan_within(input, reserve);
    }
    // A peak larger than all the extend contexts can ever have (the
    // capacity less the critical contexts' demand and the others' floors)
    // is waited for only as far as it can be had.
    let floors: u64 = input
        .contexts
        .iter()
        .map(|c| match c.class {
            Class::Critical => demand(c),
            Class::Extend => c.floor.min(demand(c)),
        })
        .sum();
    let most = |c: &ContextInput| {
        input
            .capacity
            .saturating_sub(floors)
            .saturating_add(c.floor)
    };
    if input.contexts.iter().any(|c| c.peak > most(c)) {
        let mut within = input.clone();
        for c in &mut within.contexts {
            c.peak = c.peak.min(most(c));
        }
        return plan_within(&within, reserve);
    }
    plan_within(input, reserve)
}

fn plan_within(input: &PlanInput, reserve: u64) -> Plan {
    let cs = &input.contexts;
    let mut room = Room {
        targets: vec![0u64; cs.len()],
        left: input.capacity,
        overcommitted: false,
    };
    let mut acct = RoomAccount {
        reserve,
        ..RoomAccount::default()
    };
    let mut mark = room.left;
    // 1. Critical contexts, in full.
    room.give_each(cs, |c| c.class == Class::Critical, demand);
    RoomAccount::took(&mut acct.critical, &mut mark, room.left);
    // 2. Every extend context's floor (or less, if it needs less).
    room.give_each(cs, |c| c.class == Class::Extend, |c| c.floor.min(demand(c)));
    RoomAccount::took(&mut acct.floors, &mut mark, room.left);
    // 3. The rest to extend contexts above their floor, by rank; queued
    //    waking contexts after the admitted ones, in wake order.
    // On a host meant to be full, a waking or busy context gets what it has
    // first; its room to grow comes after the resting ones have kept theirs
    // (a function's call ends within a tick or two: its margin, held
    // unused, pushed out the next call's function).
    let woken = of_rank(cs, 0);
    room.share(cs, &woken, demand_first);
    RoomAccount::took(&mut acct.woken, &mut mark, room.left);
    // Under admission at the peak, the busy contexts keep room for what
    // they need (their peak) before a queued one is let in, in the order
    // their stretches began; those it no longer holds wait their turn.
    let mut busy = of_rank(cs, 2);
    let out_of_turn = room.run_in_turn(cs, &busy);
    RoomAccount::took(&mut acct.in_turn, &mut mark, room.left);
    busy.retain(|&i| !out_of_turn[i]);
    let mut waits = room.admit_queued(cs);
    RoomAccount::took(&mut acct.queued, &mut mark, room.left);
    for (w, o) in waits.iter_mut().zip(out_of_turn) {
        *w |= o;
    }
    let prefetched = room.prefetch_whole(cs);
    RoomAccount::took(&mut acct.prefetched, &mut mark, room.left);
    acct.foresaw(cs, &prefetched);
    room.share(cs, &busy, demand_first);
    RoomAccount::took(&mut acct.busy, &mut mark, room.left);
    // 3b. Resting contexts that are pushed out only when needed keep what
    //     they hold while it fits, those expected to wake soonest for their
    //     whole size first; the rest are pushed out only as far as the room
    //     requires.
    let keep_order = room.keep_resting(cs, reserve);
    RoomAccount::took(&mut acct.kept, &mut mark, room.left);
    // 3c. What is still free beyond the reserve is refilled: resting
    //     contexts with pages out are read back whole, the most valuable
    //     first, ahead of their next call; the margins of the woken and
    //     busy ones come out of what is left. (Margins first, a bench/faas
    //     host left 106 MiB of them uncharged on average, 5 functions' worth,
    //     while calls waited on read-backs: a function's call does not grow it.)
    let refilled = room.refill(cs, reserve);
    RoomAccount::took(&mut acct.refilled, &mut mark, room.left);
    room.share(cs, &woken, demand);
    room.share(cs, &busy, demand);
    RoomAccount::took(&mut acct.margins, &mut mark, room.left);
    // 4. What nobody needs now is split evenly among the active extend
    //    contexts, so one that allocates fast between two ticks grows into free
    //    DRAM instead of reclaiming its own pages at a limit set a tick ago.
    //    The sum still fits: a context that wakes takes its room back next tick.
    let active: Vec<usize> = (0..cs.len())
        .filter(|&i| cs[i].class == Class::Extend && rank(&cs[i]) == 2 && !waits[i])
        .collect();
    if let Some(each) = room.left.checked_div(active.len() as u64) {
        for &i in &active {
            room.targets[i] += each;
        }
    }
    RoomAccount::took(&mut acct.spread, &mut mark, room.left);
    acct.left = room.left;
    acct.squeezes(cs, &room.targets, &keep_order);
    let throttle = cs
        .iter()
        .any(|c| c.class == Class::Critical && c.under_pressure);
    Plan {
        actions: actions(cs, &room.targets, &waits, &prefetched, &refilled),
        targets: room.targets,
        throttle,
        overcommitted: room.overcommitted,
        room: acct,
    }
}

/// The actions that move each context toward its target.
fn actions(
    cs: &[ContextInput],
    targets: &[u64],
    waits: &[bool],
    prefetched: &[bool],
    refilled: &[bool],
) -> Vec<Action> {
    let mut actions = Vec::new();
    for (i, ((c, &target), &waits)) in cs.iter().zip(targets).zip(waits).enumerate() {
        let key = c.key.clone();
        if c.class == Class::Critical {
            actions.push(Action::Protect { key, bytes: target });
            continue;
        }
        if waits {
            actions.push(Action::Wait { key: key.clone() });
            actions.push(Action::Limit { key, bytes: target });
            continue;
        }
        // A predicted wake is served only with room for its whole working set.
        let room = rank(c) != 1 || prefetched[i];
        let refill = refilled[i].then_some(PrefetchReason::Refill);
        if let Some(reason) = c.prefetch.filter(|_| c.swapped > 0 && room).or(refill) {
            actions.push(Action::BringBack {
                key: key.clone(),
                reason,
            });
        }
        // Above its target (idle, or active and squeezed for room others
        // need): the targeted page-out goes first, at the mover's pace and
        // priority, and the limit follows it down (a v1 limit written below
        // the usage reclaims in the daemon's own loop, at its priority).
        let prefetched = c.prefetch.is_some() && room;
        if c.state != State::Waking && !prefetched && c.usage > target + PUSH_SLACK_BYTES {
            actions.push(Action::PushOut {
                key: key.clone(),
                keep: target,
            });
        }
        actions.push(Action::Limit { key, bytes: target });
    }
    actions
}

#[path = "planner_needs.rs"]
mod needs;
use needs::{demand, demand_first, fits, rank, resting, runs_now};

#[path = "planner_room.rs"]
mod room;
use room::{of_rank, Room};

#[path = "planner_account.rs"]
mod account;
pub use account::{Foreseen, RoomAccount, Squeeze};

#[cfg(test)]
#[path = "planner_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "planner_peak_tests.rs"]
mod peak_tests;

#[cfg(test)]
#[path = "planner_full_tests.rs"]
mod full_tests;

#[cfg(test)]
#[path = "planner_reserve_tests.rs"]
mod reserve_tests;

#[cfg(test)]
#[path = "planner_prop_tests.rs"]
mod prop_tests;
