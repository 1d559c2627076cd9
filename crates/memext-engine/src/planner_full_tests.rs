//! The planner on a host meant to be full (`push_out = "when-needed"`):
//! resting functions keep what they hold, the most valuable first; wakes
//! get their margins after them; free DRAM is refilled ahead of predicted
//! calls, each read back whole or not at all.

use super::tests::{ctx, pushed_out, target, MIB};
use super::*;
use std::time::Duration;

/// On a host meant to be full: a function of 100 MiB between two calls
/// (active, quiet), its next call expected in `wake_s`.
pub(super) fn quiet(key: &str, wake_s: u64) -> ContextInput {
    ContextInput {
        keep_while_room: true,
        quiet: true,
        expected_wake_in: Some(Duration::from_secs(wake_s)),
        ..ctx(key, Class::Extend, State::Active, 100, 100)
    }
}

/// On a host meant to be full: a function just called, holding 32 MiB of
/// its `mib`, the rest in swap.
fn woken(key: &str, mib: u64) -> ContextInput {
    ContextInput {
        swapped: (mib - 32) * MIB,
        prefetch: Some(PrefetchReason::Woke),
        keep_while_room: true,
        ..ctx(key, Class::Extend, State::Waking, 32, mib)
    }
}

/// A host meant to be full (bench/faas): between two calls, an active
/// function is quiet. It rests: room for its next call is not grown for
/// it while another function's call waits, and of the resting ones the
/// most valuable keep what they hold (the soonest call per byte held)
/// instead of every one being squeezed in proportion, each paged out in
/// part and every next call faulting.
#[test]
fn quiet_active_contexts_on_a_full_host_rest_and_the_most_valuable_keep_what_they_hold() {
    // 330 - 3 floors (96) - the call's 150 (118 beyond its floor) = 116
    // left, 32 of it kept free: "often" keeps its 102 (70 above its
    // floor), "once" gets the 14 left, the call its margin out of the 32.
    let input = PlanInput {
        capacity: 330 * MIB,
        contexts: vec![woken("called", 150), quiet("once", 100), quiet("often", 5)],
    };
    let p = plan(&input);
    assert!(target(&p, &input, "called") >= 150 * MIB);
    assert_eq!(target(&p, &input, "often"), 102 * MIB, "kept");
    assert_eq!(target(&p, &input, "once"), (32 + 14) * MIB);
    assert!(p.actions.contains(&Action::PushOut {
        key: "once".into(),
        keep: 46 * MIB
    }));
    assert!(!pushed_out(&p, "often"), "{:?}", p.actions);

    // Of two called as often, the smaller is kept first.
    let sized = |key: &str, mib: u64| ContextInput {
        usage: mib * MIB,
        working_set: mib * MIB,
        ..quiet(key, 10)
    };
    let input = PlanInput {
        capacity: 200 * MIB,
        contexts: vec![sized("large", 150), sized("small", 60)],
    };
    let p = plan(&input);
    assert_eq!(target(&p, &input, "small"), 62 * MIB, "kept, with slack");
    assert_eq!(
        target(&p, &input, "large"),
        (200 - 32 - 62) * MIB,
        "the rest"
    );

    // Busy (not quiet), an active context gets what it holds first, a
    // resting one keeps what it holds next, and the busy one's room to grow
    // comes out of what is left: 250 - 2 floors (64) = 186; the busy one's
    // 100 + 8 slack (76 above its floor), the resting one's 102 (70), 32
    // kept free; 40 left: the busy one's margin (24), and the rest (16),
    // which nobody needs.
    let mut busy = quiet("busy", 5);
    busy.quiet = false;
    let input = PlanInput {
        capacity: 250 * MIB,
        contexts: vec![busy.clone(), quiet("resting", 5)],
    };
    let p = plan(&input);
    assert_eq!(target(&p, &input, "resting"), 102 * MIB, "kept");
    assert_eq!(target(&p, &input, "busy"), 148 * MIB, "and its margin");
    assert!(
        !p.actions
            .iter()
            .any(|a| matches!(a, Action::PushOut { .. })),
        "{:?}",
        p.actions
    );
}

/// On a host meant to be full, a woken function gets all it has first and
/// its room to grow after the resting ones have kept what they hold:
/// 250 - 2 floors (64) - the wake's 68 beyond its floor = 118, 32 of it
/// kept free: the resting one keeps its 102 (70 above its floor), and the
/// 48 left give the woken one its 32 MiB margin.
#[test]
fn on_a_full_host_a_wake_gets_its_margin_after_the_resting_keep_theirs() {
    let input = PlanInput {
        capacity: 250 * MIB,
        contexts: vec![woken("woken", 100), quiet("resting", 5)],
    };
    let p = plan(&input);
    assert_eq!(target(&p, &input, "resting"), 102 * MIB, "{:?}", p.actions);
    assert_eq!(target(&p, &input, "woken"), 132 * MIB);
}

/// A context whose growth was learned (`growth`) gets that margin, not the
/// flat one: here 4 MiB above the 100 it has.
#[test]
fn a_learned_margin_replaces_the_flat_one() {
    let mut called = woken("woken", 100);
    called.growth = 4 * MIB;
    let input = PlanInput {
        capacity: 250 * MIB,
        contexts: vec![called, quiet("resting", 5)],
    };
    let p = plan(&input);
    assert_eq!(target(&p, &input, "woken"), 104 * MIB);
}

/// A resting context whose slack was learned (`growth`) keeps what it
/// holds and that slack, not the flat one; a refill reads one back whole
/// with its own slack: here 512 KiB on two of them, and the 3 MiB saved
/// let a third function be read back ahead of its call.
#[test]
fn a_learned_rest_slack_replaces_the_flat_one() {
    let out = |key: &str, wake_s: u64| ContextInput {
        swapped: 68 * MIB,
        keep_while_room: true,
        expected_wake_in: Some(Duration::from_secs(wake_s)),
        ..ctx(key, Class::Extend, State::Idle, 32, 100)
    };
    let learned = |mut c: ContextInput| {
        c.rest_slack = 512 << 10;
        c
    };
    // 336 - 3 floors (96) = 240; kept: the resting one's 100 and its
    // slack, the other two their 32 and slack (71 above the floors), 32
    // kept free: 137 for read-backs, two whole ones of 68.
    let input = PlanInput {
        capacity: 336 * MIB,
        contexts: vec![
            learned(quiet("resting", 5)),
            learned(out("soon", 10)),
            out("later", 20),
        ],
    };
    let refills = |p: &Plan| -> Vec<String> {
        p.actions
            .iter()
            .filter_map(|a| match a {
                Action::BringBack {
                    key,
                    reason: PrefetchReason::Refill,
                } => Some(key.as_str().to_string()),
                _ => None,
            })
            .collect()
    };
    let p = plan(&input);
    assert_eq!(target(&p, &input, "resting"), 100 * MIB + (512 << 10));
    assert_eq!(target(&p, &input, "soon"), 100 * MIB + (512 << 10));
    assert_eq!(target(&p, &input, "later"), 102 * MIB);
    assert_eq!(refills(&p), vec!["soon", "later"], "{:?}", p.actions);
    // The flat slack on the same two: 3 MiB more kept unused, and the
    // second read-back no longer fits.
    let mut flat = input.clone();
    for c in &mut flat.contexts {
        c.rest_slack = REST_SLACK_BYTES;
    }
    let q = plan(&flat);
    assert_eq!(target(&q, &flat, "resting"), 102 * MIB);
    assert_eq!(refills(&q), vec!["soon"], "{:?}", q.actions);
}

/// On a host meant to be full, a resting function that holds less than
/// its floor (pushed out to it, then the kernel took more) is given what
/// it holds and its slack, not its floor: the rest of the floor is room
/// another function's call can use (here a call holding 960 MiB leaves no
/// room to read it back). Elsewhere the floor stays its own.
#[test]
fn on_a_full_host_a_floor_above_what_a_resting_context_holds_is_not_kept() {
    let small = |key: &str, keep: bool| ContextInput {
        swapped: 70 * MIB,
        keep_while_room: keep,
        quiet: keep,
        expected_wake_in: Some(Duration::from_secs(60)),
        rest_slack: 512 << 10,
        peak: 0,
        in_turn: None,
        ..ctx(key, Class::Extend, State::Idle, 1, 71)
    };
    let mut input = PlanInput {
        capacity: 1024 * MIB,
        contexts: vec![small("out", true), woken("called", 960)],
    };
    // No room to read it back: the call holds 960 MiB.
    input.contexts[1].usage = 960 * MIB;
    input.contexts[1].swapped = 0;
    let p = plan(&input);
    assert_eq!(target(&p, &input, "out"), MIB + (512 << 10));
    let mut default = input.clone();
    default.contexts[0] = small("out", false);
    let p = plan(&default);
    assert_eq!(target(&p, &default, "out"), 32 * MIB, "its floor");
}

/// On a host meant to be full, a resting function with its pages out
/// keeps what it holds but no slack above it: its target is the same
/// whether the room is loose or taken by a call (with the slack it went
/// from 4.0 to 4.4 MiB and back with the room: a limit written at each
/// wake, and the function polled until it was down).
#[test]
fn a_resting_function_with_its_pages_out_keeps_no_slack_whatever_the_room() {
    let out = ContextInput {
        usage: 4 * MIB - (100 << 10),
        swapped: 80 * MIB,
        floor: 4 * MIB,
        keep_while_room: true,
        expected_wake_in: Some(Duration::from_secs(60)),
        rest_slack: 512 << 10,
        ..ctx("out", Class::Extend, State::Idle, 0, 84)
    };
    // Room for its slack, not for reading it back whole (a refill).
    let loose = PlanInput {
        capacity: 64 * MIB,
        contexts: vec![out.clone()],
    };
    let mut called = woken("called", 1020);
    called.usage = 1020 * MIB;
    called.swapped = 0;
    let tight = PlanInput {
        capacity: 1024 * MIB,
        contexts: vec![out.clone(), called],
    };
    let (l, t) = (plan(&loose), plan(&tight));
    assert_eq!(target(&t, &tight, "out"), 4 * MIB, "its floor");
    assert_eq!(target(&l, &loose, "out"), 4 * MIB, "the same with room");
    // Resident (nothing out), it keeps its slack where there is room.
    let resident = PlanInput {
        capacity: 64 * MIB,
        contexts: vec![ContextInput { swapped: 0, ..out }],
    };
    let r = plan(&resident);
    assert_eq!(target(&r, &resident, "out"), 4 * MIB + (412 << 10));
}

/// On a host meant to be full, the refill comes before the margins. Of
/// 300 MiB, less 2 floors (64), the call's 150 (118 beyond its floor) and
/// the resting one's slack (2), 116 are left; 32 kept free, the resting
/// one's 68 are read back, the call's margin comes out of the rest (16 of
/// the reserve; its 32 first left no room for the read-back).
#[test]
fn on_a_full_host_a_refill_comes_before_the_margins() {
    let next = ContextInput {
        swapped: 68 * MIB,
        keep_while_room: true,
        expected_wake_in: Some(Duration::from_secs(5)),
        ..ctx("next", Class::Extend, State::Idle, 32, 100)
    };
    let input = PlanInput {
        capacity: 300 * MIB,
        contexts: vec![woken("called", 150), next],
    };
    let p = plan(&input);
    assert!(
        p.actions.contains(&Action::BringBack {
            key: "next".into(),
            reason: PrefetchReason::Refill
        }),
        "{:?}",
        p.actions
    );
    assert_eq!(target(&p, &input, "next"), 102 * MIB);
    assert_eq!(target(&p, &input, "called"), 182 * MIB, "its margin too");
}

/// On a host meant to be full, DRAM free beyond the reserve is refilled:
/// resting contexts with pages out are read back whole, the most valuable
/// first, never at the cost of what another keeps; one never called (no
/// expected call) is not.
#[test]
fn free_dram_on_a_full_host_is_refilled_most_valuable_first() {
    let out = |key: &str, wake_s: Option<u64>| ContextInput {
        swapped: 68 * MIB,
        keep_while_room: true,
        expected_wake_in: wake_s.map(Duration::from_secs),
        ..ctx(key, Class::Extend, State::Idle, 32, 100)
    };
    let kept = ContextInput {
        keep_while_room: true,
        expected_wake_in: Some(Duration::from_secs(100)),
        ..ctx("kept", Class::Extend, State::Idle, 100, 100)
    };
    // 400 - 4 floors (128) = 272; each keeps what it holds, the one with
    // nothing out its slack too (0, 70, 0, 0): 202 left, 32 of it kept
    // free: room for two whole read-backs of 70 more each.
    let input = PlanInput {
        capacity: 400 * MIB,
        contexts: vec![
            out("rare", Some(60)),
            kept,
            out("soon", Some(5)),
            out("never", None),
        ],
    };
    let p = plan(&input);
    let refills: Vec<&str> = p
        .actions
        .iter()
        .filter_map(|a| match a {
            Action::BringBack {
                key,
                reason: PrefetchReason::Refill,
            } => Some(key.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(refills, vec!["rare", "soon"], "{:?}", p.actions);
    assert_eq!(target(&p, &input, "soon"), 102 * MIB, "whole, with slack");
    assert_eq!(target(&p, &input, "kept"), 102 * MIB, "keeps what it holds");
    assert_eq!(
        target(&p, &input, "never"),
        32 * MIB,
        "what it holds (its pages out: no slack)"
    );

    // Less room (110 beyond the reserve): only the most valuable one.
    let mut tight = input.clone();
    tight.capacity = 340 * MIB;
    let p = plan(&tight);
    assert!(p.actions.contains(&Action::BringBack {
        key: "soon".into(),
        reason: PrefetchReason::Refill
    }));
    assert!(!p
        .actions
        .iter()
        .any(|a| matches!(a, Action::BringBack { key, .. } if key.as_str() == "rare")));
    assert_eq!(target(&p, &tight, "kept"), 102 * MIB);
}

/// The keep order weighs a resting function by its whole size, what it
/// holds and what it has out: one paged out in part does not make its
/// next call warm with the part it holds, so it does not keep that part
/// before a whole one called a little later (by what it held, it did, and
/// the whole one was paged out in part too).
#[test]
fn a_partly_paged_function_is_weighed_whole_in_the_keep_order() {
    let resting = |key: &str, usage: u64, swapped: u64, wake_s: u64| ContextInput {
        swapped: swapped * MIB,
        floor: 4 * MIB,
        keep_while_room: true,
        expected_wake_in: Some(Duration::from_secs(wake_s)),
        ..ctx(key, Class::Extend, State::Idle, usage, usage + swapped)
    };
    // 100 - 2 floors (8) - the reserve (32) = 60 to keep: "whole" (next
    // call in 15 s, 60 MiB: 900) before "part" (10 s, 100 MiB in whole:
    // 1000); by what "part" held (20 MiB: 200) it came first.
    let input = PlanInput {
        capacity: 100 * MIB,
        contexts: vec![resting("part", 20, 80, 10), resting("whole", 60, 0, 15)],
    };
    let p = plan(&input);
    assert_eq!(target(&p, &input, "whole"), 62 * MIB, "kept whole");
    assert!(!pushed_out(&p, "whole"), "{:?}", p.actions);
    assert_eq!(target(&p, &input, "part"), 6 * MIB, "the 2 left");
}

/// Two predicted wakes and room for one: the sooner is brought back whole,
/// the other not at all (read back into part of the room it needs, a
/// working set is reclaimed at its own limit before it is used).
#[test]
fn a_predicted_wake_is_brought_back_whole_or_not_at_all() {
    let predicted = |key: &str, ws: u64, wake_s: u64| ContextInput {
        swapped: (ws - 32) * MIB,
        prefetch: Some(PrefetchReason::Periodic),
        expected_wake_in: Some(Duration::from_secs(wake_s)),
        ..ctx(key, Class::Extend, State::Idle, 32, ws)
    };
    let bring_backs = |p: &Plan| -> Vec<String> {
        p.actions
            .iter()
            .filter(|a| matches!(a, Action::BringBack { .. }))
            .map(|a| a.key().to_string())
            .collect()
    };
    // 1000 - 3 floors (96) - the waking context (300) = 604 left.
    for (a_in, b_in, whole, left_out) in [(1, 2, "a", "b"), (2, 1, "b", "a")] {
        let input = PlanInput {
            capacity: 1000 * MIB,
            contexts: vec![
                ctx("waking", Class::Extend, State::Waking, 300, 300),
                predicted("a", 500, a_in),
                predicted("b", 300, b_in),
            ],
        };
        let p = plan(&input);
        assert_eq!(bring_backs(&p), vec![whole.to_string()], "{:?}", p.actions);
        let ws = input
            .contexts
            .iter()
            .find(|c| c.key.as_str() == whole)
            .expect("in")
            .working_set;
        assert!(target(&p, &input, whole) >= ws, "whole");
        assert_eq!(target(&p, &input, left_out), 32 * MIB, "its floor");
    }
}

/// A function called every 15 s stays active (never judged idle), and its
/// limit paged most of it out between calls: due again, or started, it is
/// given room for all it has and brought back, not its 20 MiB usage plus
/// a margin (through which its 73 MiB heap was read: 18.7k major faults
/// per call in bench/faas).
#[test]
fn an_active_context_paged_out_by_its_limit_gets_all_it_has_when_due() {
    for reason in [PrefetchReason::Periodic, PrefetchReason::Woke] {
        let f = ContextInput {
            swapped: 53 * MIB,
            prefetch: Some(reason),
            ..ctx("f", Class::Extend, State::Active, 20, 20)
        };
        let input = PlanInput {
            capacity: 1000 * MIB,
            contexts: vec![f, ctx("busy", Class::Extend, State::Active, 600, 600)],
        };
        let p = plan(&input);
        assert!(
            target(&p, &input, "f") >= 73 * MIB,
            "{reason}: {}",
            target(&p, &input, "f") / MIB
        );
        assert!(p.actions.contains(&Action::BringBack {
            key: "f".into(),
            reason
        }));
    }
}
