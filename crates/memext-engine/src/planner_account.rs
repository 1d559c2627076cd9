//! Where a plan's room went, step by step, and the resting contexts it kept
//! in part or not at all: what the daemon logs (`room`, debug) so that a
//! call that found its function squeezed can be traced to the step that
//! took the room. Pure, like the planner it describes.

use std::time::Duration;

use super::{resting, ContextInput, PUSH_SLACK_BYTES};
use crate::predict::PrefetchReason;
use crate::{Class, ContextId};

/// Bytes of the capacity each step of the order of service handed out.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct RoomAccount {
    pub critical: u64,
    /// Every extend context's floor (or less, where it needs less).
    pub floors: u64,
    /// Waking contexts: all they have (on a full host) or their demand.
    pub woken: u64,
    /// Busy contexts in turn (admission at the peak).
    pub in_turn: u64,
    /// Queued wakes admitted.
    pub queued: u64,
    /// Predicted wakes, each whole.
    pub prefetched: u64,
    /// Busy contexts: what they hold (on a full host) or their demand.
    pub busy: u64,
    /// Resting contexts keeping what they hold, the most valuable first.
    pub kept: u64,
    /// Resting contexts read back whole ahead of their call.
    pub refilled: u64,
    /// The woken and busy contexts' room to grow.
    pub margins: u64,
    /// What nobody needed, split among the active contexts.
    pub spread: u64,
    /// Left unplanned at the end.
    pub left: u64,
    /// What the resting contexts leave free (`KEEP_RESERVE_DIV`).
    pub reserve: u64,
    /// Resting contexts (on a host meant to be full) whose target is below
    /// what they hold, in the planner's keep order: the most valuable first.
    pub squeezed: Vec<Squeeze>,
    /// Resting contexts that keep all they hold.
    pub kept_whole: u32,
    /// The contexts served whole for a predicted wake (`prefetched`): what
    /// took that step's room.
    pub foreseen: Vec<Foreseen>,
}

/// A context the plan served whole for a predicted wake, or held for one.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Foreseen {
    pub key: ContextId,
    pub reason: PrefetchReason,
    /// What it holds now and what it has out.
    pub holds: u64,
    pub swapped: u64,
}

/// A resting context the plan keeps in part or not at all.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Squeeze {
    pub key: ContextId,
    /// What it holds now.
    pub holds: u64,
    /// What the plan lets it keep.
    pub target: u64,
    /// What it holds and what it has out: what its keep order weighs.
    pub whole: u64,
    pub expected_wake_in: Option<Duration>,
}

impl RoomAccount {
    /// Adds what a step took since `mark` (the room left before it) to
    /// `step`, and moves the mark.
    pub(super) fn took(step: &mut u64, mark: &mut u64, left: u64) {
        *step += mark.saturating_sub(left);
        *mark = left;
    }

    /// Records the contexts of `cs` served whole for a predicted wake
    /// (`served`, by input index).
    pub(super) fn foresaw(&mut self, cs: &[ContextInput], served: &[bool]) {
        for (c, _) in cs.iter().zip(served).filter(|(_, &s)| s) {
            if let Some(reason) = c.prefetch {
                self.foreseen.push(Foreseen {
                    key: c.key.clone(),
                    reason,
                    holds: c.usage,
                    swapped: c.swapped,
                });
            }
        }
    }

    /// Records the resting contexts of `cs` that `targets` squeeze, in
    /// `order` (the keep order), and how many keep all they hold.
    pub(super) fn squeezes(&mut self, cs: &[ContextInput], targets: &[u64], order: &[usize]) {
        for &i in order {
            let c = &cs[i];
            if !(c.class == Class::Extend && c.keep_while_room && resting(c)) {
                continue;
            }
            if targets[i].saturating_add(PUSH_SLACK_BYTES) >= c.usage {
                self.kept_whole += 1;
                continue;
            }
            self.squeezed.push(Squeeze {
                key: c.key.clone(),
                holds: c.usage,
                target: targets[i],
                whole: c.usage.saturating_add(c.swapped),
                expected_wake_in: c.expected_wake_in,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::full_tests::quiet;
    use super::super::tests::{ctx, MIB};
    use super::super::*;
    use super::Foreseen;
    use crate::predict::PrefetchReason;

    /// 330 MiB: three floors of 32, the woken function's 118 beyond its
    /// floor, "often" keeps its 70 above its floor and "once" 14, and the
    /// 32 left are the woken one's margin. The steps add up to the
    /// capacity, and "once", kept in part, is the one squeezed.
    #[test]
    fn the_account_says_which_step_took_the_room_and_whom_it_squeezed() {
        let woken = ContextInput {
            swapped: 118 * MIB,
            prefetch: Some(PrefetchReason::Woke),
            keep_while_room: true,
            ..ctx("called", Class::Extend, State::Waking, 32, 150)
        };
        let input = PlanInput {
            capacity: 330 * MIB,
            contexts: vec![woken, quiet("once", 100), quiet("often", 5)],
        };
        let a = plan(&input).room;
        assert_eq!(
            (a.floors, a.woken, a.kept, a.margins, a.left),
            (96 * MIB, 118 * MIB, 84 * MIB, 32 * MIB, 0),
            "{a:?}"
        );
        let steps = [
            a.critical,
            a.floors,
            a.woken,
            a.in_turn,
            a.queued,
            a.prefetched,
            a.busy,
            a.kept,
            a.refilled,
            a.margins,
            a.spread,
            a.left,
        ];
        assert_eq!(steps.iter().sum::<u64>(), input.capacity);
        assert_eq!(a.kept_whole, 1);
        assert_eq!(
            a.squeezed,
            vec![Squeeze {
                key: "once".into(),
                holds: 100 * MIB,
                target: 46 * MIB,
                whole: 100 * MIB,
                expected_wake_in: Some(Duration::from_secs(100)),
            }]
        );
    }

    /// A context held for its predicted call is served whole before the
    /// resting ones keep theirs, and the account names it with its reason.
    #[test]
    fn the_account_names_what_it_served_for_a_predicted_wake() {
        let held = ContextInput {
            prefetch: Some(PrefetchReason::Periodic),
            keep_while_room: true,
            ..ctx("timer", Class::Extend, State::Active, 100, 100)
        };
        let input = PlanInput {
            capacity: 330 * MIB,
            contexts: vec![held, quiet("once", 100)],
        };
        let a = plan(&input).room;
        // All it holds beyond its floor, at least.
        assert!(a.prefetched >= 68 * MIB, "{a:?}");
        assert_eq!(
            a.foreseen,
            vec![Foreseen {
                key: "timer".into(),
                reason: PrefetchReason::Periodic,
                holds: 100 * MIB,
                swapped: 0,
            }]
        );
    }

    /// Idle contexts of a host that pushes out when idle are not resting
    /// ones kept while there is room: none is reported squeezed.
    #[test]
    fn contexts_pushed_out_when_idle_are_not_reported() {
        let input = PlanInput {
            capacity: 330 * MIB,
            contexts: vec![ctx("idle", Class::Extend, State::Idle, 100, 100)],
        };
        let a = plan(&input).room;
        assert!(a.squeezed.is_empty() && a.kept_whole == 0, "{a:?}");
        assert_eq!(a.floors, 32 * MIB);
    }
}
