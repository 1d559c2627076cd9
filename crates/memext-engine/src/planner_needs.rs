//! What each context needs of the planner: its demand, what it has before
//! its room to grow, what admission waits for, and its serving rank. Pure
//! functions of one `ContextInput`.

use super::{ContextInput, PUSH_SLACK_BYTES};
use crate::model::State;
use crate::predict::PrefetchReason;
use crate::Class;

fn with_headroom(bytes: u64, pct: u8) -> u64 {
    bytes.saturating_add(bytes / 100 * u64::from(pct))
}

/// Whether an extend context rests between calls on a host meant to be
/// full: idle, or active but quiet, with no wake to serve. It needs only
/// its floor; it keeps what it holds while there is room, by the value of
/// what it holds (`Room::keep_resting`), instead of growing room it does
/// not use while the next call of another waits for it.
pub(super) fn resting(c: &ContextInput) -> bool {
    c.class == Class::Extend
        && c.prefetch.is_none()
        && (c.state == State::Idle || (c.keep_while_room && c.quiet && c.state == State::Active))
}

/// What an extend context that runs has, before its room to grow: what it
/// holds (busy); all it has, also what its limit paged out meanwhile
/// (woke, active again after a quiet stretch (an onset), or due: it touches
/// all of it, and its read-back brings all of that in); else its working
/// set.
fn has(c: &ContextInput) -> u64 {
    let base = c.usage.max(c.working_set);
    match (c.state, c.prefetch) {
        (State::Active, None) => c.usage,
        (State::Waking | State::Active, Some(_)) => base.max(c.usage.saturating_add(c.swapped)),
        _ => base,
    }
}

/// What a context would need to run unhindered.
pub(super) fn demand(c: &ContextInput) -> u64 {
    if resting(c) {
        // On a host meant to be full, a floor above what it holds is not
        // kept free for it: what it holds and its slack. (Pushed-out
        // functions holding 1 MiB of a 4 MiB floor left a mean 22-36 MiB of
        // bench/faas' cap unused, once the slack was learned.)
        if c.keep_while_room {
            return c.floor.min(c.usage.saturating_add(c.rest_slack));
        }
        return c.floor;
    }
    if c.class == Class::Critical {
        return with_headroom(c.usage.max(c.working_set), c.headroom_pct);
    }
    let has = has(c);
    let grown = with_headroom(has, c.headroom_pct)
        .max(has.saturating_add(c.growth))
        .max(c.peak);
    match (c.state, c.prefetch) {
        (State::Active, None) | (State::Waking | State::Active, Some(_)) => grown,
        // Waking or prefetched: its working set, plus the room an active context
        // gets, since its other pages and the swap cache fill count too.
        _ => grown.max(c.floor),
    }
}

/// What a context needs before the resting ones keep what they hold, on a
/// host meant to be full: all it has (woken or predicted) or what it holds
/// (busy), its room to grow after them. (Reserved first, the margins of
/// the busy and waking functions, unused, pushed out resting ones: a third
/// of bench/faas' cap stayed unused while calls waited.)
pub(super) fn demand_first(c: &ContextInput) -> u64 {
    if !c.keep_while_room || c.class != Class::Extend || c.state == State::Idle {
        return demand(c);
    }
    let slack = match (c.state, c.prefetch) {
        (State::Active, None) => PUSH_SLACK_BYTES,
        _ => 0,
    };
    has(c).saturating_add(slack).max(c.floor).min(demand(c))
}

/// What a waking context must have to run its working set without faulting
/// it in again, or under admission at the peak to reach its peak: what
/// admission waits for (its growth margin is not).
pub(super) fn fits(c: &ContextInput) -> u64 {
    c.usage.max(c.working_set).max(c.floor).max(c.peak)
}

/// Whether an extend context takes CPU now: waking, or active and not
/// quiet (what `wakes_at_once` counts).
pub(super) fn runs_now(c: &ContextInput) -> bool {
    c.class == Class::Extend
        && c.queued.is_none()
        && (c.state == State::Waking || (c.state == State::Active && !c.quiet))
}

/// Serving order of extend contexts beyond their floor: waking and
/// prefetched before active.
pub(super) fn rank(c: &ContextInput) -> u8 {
    if resting(c) {
        return 3;
    }
    match (c.state, c.prefetch) {
        (State::Waking, _) | (_, Some(PrefetchReason::Woke)) => 0,
        (_, Some(_)) => 1,
        (State::Active, None) => 2,
        (State::Idle, None) => 3,
    }
}
