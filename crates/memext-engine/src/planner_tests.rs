//! The planner on hand-made inputs and on generated ones (proptest).
use super::*;
use proptest::prelude::*;
use std::time::Duration;

pub(super) const MIB: u64 = 1 << 20;

pub(super) fn ctx(
    key: &str,
    class: Class,
    state: State,
    usage_mib: u64,
    ws_mib: u64,
) -> ContextInput {
    ContextInput {
        key: key.into(),
        class,
        state,
        usage: usage_mib * MIB,
        working_set: ws_mib * MIB,
        swapped: 0,
        floor: 32 * MIB,
        headroom_pct: if class == Class::Critical { 10 } else { 0 },
        under_pressure: false,
        prefetch: None,
        queued: None,
        keep_while_room: false,
        quiet: false,
        expected_wake_in: None,
        growth: GROWTH_BYTES,
        rest_slack: REST_SLACK_BYTES,
        peak: 0,
        in_turn: None,
    }
}

/// Whether the plan pushes `key` out.
fn pushed_out(p: &Plan, key: &str) -> bool {
    p.actions
        .iter()
        .any(|a| matches!(a, Action::PushOut { key: k, .. } if k.as_str() == key))
}

pub(super) fn target(p: &Plan, input: &PlanInput, key: &str) -> u64 {
    p.targets[input
        .contexts
        .iter()
        .position(|c| c.key.as_str() == key)
        .expect("key")]
}

#[test]
fn critical_first_idle_to_floor_active_gets_the_rest() {
    let input = PlanInput {
        capacity: 2048 * MIB,
        contexts: vec![
            ctx("redis", Class::Critical, State::Active, 1000, 1000),
            ctx("idle", Class::Extend, State::Idle, 400, 400),
            ctx("busy", Class::Extend, State::Active, 300, 300),
        ],
    };
    let p = plan(&input);
    assert_eq!(target(&p, &input, "redis"), 1100 * MIB);
    assert_eq!(target(&p, &input, "idle"), 32 * MIB);
    assert_eq!(
        target(&p, &input, "busy"),
        (2048 - 1100 - 32) * MIB,
        "the active context gets all the room nobody else needs"
    );
    assert!(p.actions.contains(&Action::PushOut {
        key: "idle".into(),
        keep: 32 * MIB
    }));
    assert!(p.actions.contains(&Action::Protect {
        key: "redis".into(),
        bytes: 1100 * MIB
    }));
    assert!(!p
        .actions
        .iter()
        .any(|a| matches!(a, Action::PushOut { key, .. } if key.as_str() != "idle")));
    assert!(!p.overcommitted && !p.throttle);
}

#[test]
fn a_waking_context_gets_its_working_set_before_active_ones() {
    let mut waking = ctx("waking", Class::Extend, State::Waking, 40, 500);
    waking.swapped = 460 * MIB;
    waking.prefetch = Some(PrefetchReason::Woke);
    let input = PlanInput {
        capacity: 800 * MIB,
        contexts: vec![waking, ctx("busy", Class::Extend, State::Active, 600, 600)],
    };
    let p = plan(&input);
    assert_eq!(
        target(&p, &input, "waking"),
        532 * MIB,
        "its working set plus growth room"
    );
    assert_eq!(target(&p, &input, "busy"), 268 * MIB);
    assert!(p.actions.contains(&Action::BringBack {
        key: "waking".into(),
        reason: PrefetchReason::Woke
    }));
}

#[test]
fn free_room_is_split_among_active_contexts_and_given_up_to_a_waking_one() {
    let input = PlanInput {
        capacity: 2048 * MIB,
        contexts: vec![
            ctx("job1", Class::Extend, State::Active, 300, 300),
            ctx("job2", Class::Extend, State::Active, 500, 500),
            ctx("idle", Class::Extend, State::Idle, 200, 200),
        ],
    };
    let p = plan(&input);
    // 2048 - 32 (idle's floor) - 332 - 532 = 1152 left, 576 each.
    assert_eq!(target(&p, &input, "job1"), (332 + 576) * MIB);
    assert_eq!(target(&p, &input, "job2"), (532 + 576) * MIB);
    assert_eq!(target(&p, &input, "idle"), 32 * MIB);

    let mut woken = input.clone();
    woken.contexts[2].state = State::Waking;
    woken.contexts[2].working_set = 900 * MIB;
    let p = plan(&woken);
    assert_eq!(
        target(&p, &woken, "idle"),
        932 * MIB,
        "its working set first"
    );
    assert_eq!(p.targets.iter().sum::<u64>(), 2048 * MIB);
    assert_eq!(
        target(&p, &woken, "job1"),
        (332 + 126) * MIB,
        "the actives keep their use plus an even share of the rest"
    );
}

/// `push_out = "when-needed"`: idle contexts keep what they hold while the
/// capacity has room (beyond a small reserve), the ones expected to wake
/// soonest first; only the rest are pushed out, and only as far as needed.
#[test]
fn idle_contexts_pushed_out_only_when_needed_keep_what_fits_soonest_wake_first() {
    let keeper = |key: &str, wake_s: Option<u64>| ContextInput {
        keep_while_room: true,
        expected_wake_in: wake_s.map(Duration::from_secs),
        ..ctx(key, Class::Extend, State::Idle, 200, 200)
    };
    let contexts = vec![
        ctx("busy", Class::Extend, State::Active, 200, 200),
        keeper("unknown", None),
        keeper("rare", Some(100)),
        keeper("soon", Some(5)),
    ];
    let roomy = PlanInput {
        capacity: 1024 * MIB,
        contexts: contexts.clone(),
    };
    let p = plan(&roomy);
    assert!(
        !p.actions
            .iter()
            .any(|a| matches!(a, Action::PushOut { .. })),
        "room for all: nothing pushed out: {:?}",
        p.actions
    );
    assert_eq!(
        target(&p, &roomy, "rare"),
        202 * MIB,
        "what it holds + slack"
    );

    // 650 - 3 floors (96) - busy (232) = 322 left, 32 of it kept free: 290.
    let tight = PlanInput {
        capacity: 650 * MIB,
        contexts,
    };
    let p = plan(&tight);
    assert_eq!(target(&p, &tight, "soon"), 202 * MIB, "kept whole");
    assert_eq!(
        target(&p, &tight, "rare"),
        (32 + 290 - 170) * MIB,
        "what is left"
    );
    assert_eq!(target(&p, &tight, "unknown"), 32 * MIB, "no history: last");
    assert!(p.actions.contains(&Action::PushOut {
        key: "rare".into(),
        keep: 152 * MIB
    }));
    assert!(p.actions.contains(&Action::PushOut {
        key: "unknown".into(),
        keep: 32 * MIB
    }));
    assert!(!pushed_out(&p, "soon"));

    // The default (when idle): every idle context goes to its floor.
    let mut default = tight.clone();
    for c in &mut default.contexts {
        c.keep_while_room = false;
    }
    let p = plan(&default);
    assert_eq!(target(&p, &default, "soon"), 32 * MIB);
}

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

#[test]
fn pressure_on_a_critical_context_throttles() {
    let mut c = ctx("db", Class::Critical, State::Active, 100, 100);
    c.under_pressure = true;
    let p = plan(&PlanInput {
        capacity: 1024 * MIB,
        contexts: vec![c],
    });
    assert!(p.throttle);
}

#[test]
fn capacity_below_the_working_sets_is_shared_and_flagged() {
    let input = PlanInput {
        capacity: 256 * MIB,
        contexts: vec![
            ctx("crit", Class::Critical, State::Active, 200, 200),
            ctx("a", Class::Extend, State::Active, 400, 400),
            ctx("b", Class::Extend, State::Active, 400, 400),
        ],
    };
    let p = plan(&input);
    assert!(p.overcommitted, "220 + 2 x 32 MiB floors exceed 256 MiB");
    assert_eq!(target(&p, &input, "crit"), 220 * MIB);
    assert_eq!(target(&p, &input, "a"), target(&p, &input, "b"));
}

pub(super) fn queued(mut c: ContextInput, since: u64, overdue: bool) -> ContextInput {
    c.queued = Some(Queued {
        since: Duration::from_secs(since),
        overdue,
        at_once: None,
    });
    c
}

pub(super) fn waits(p: &Plan) -> Vec<&str> {
    p.actions
        .iter()
        .filter(|a| matches!(a, Action::Wait { .. }))
        .map(|a| a.key().as_str())
        .collect()
}

#[test]
fn waking_contexts_are_admitted_in_wake_order_each_in_full_and_the_rest_wait() {
    let wake = |k: &str, ws: u64, since: u64| {
        queued(ctx(k, Class::Extend, State::Waking, 32, ws), since, false)
    };
    let input = PlanInput {
        capacity: 1000 * MIB,
        contexts: vec![
            ctx("db", Class::Critical, State::Active, 200, 200),
            wake("a", 300, 3),
            wake("b", 300, 1),
            wake("c", 300, 2),
            // Would fit in what is left, but does not overtake `a`.
            wake("d", 40, 4),
        ],
    };
    let p = plan(&input);
    // 1000 - 220 (db) - 4 x 32 (floors) = 652: b and c in full (300 more
    // each), 52 left: a waits, and d behind it.
    assert_eq!(target(&p, &input, "b"), 332 * MIB);
    assert_eq!(target(&p, &input, "c"), 332 * MIB);
    assert_eq!(waits(&p), vec!["a", "d"]);
    assert_eq!(target(&p, &input, "a"), 32 * MIB, "waits at its floor");
    assert!(
        !p.actions
            .iter()
            .any(|a| matches!(a, Action::BringBack { key, .. } if key.as_str() == "a")),
        "nothing is read back for a waiting context"
    );
    assert!(p.targets.iter().sum::<u64>() <= input.capacity);

    // Without admission control the same wakes share the room.
    let mut free = input.clone();
    free.contexts.iter_mut().for_each(|c| c.queued = None);
    let p = plan(&free);
    assert!(waits(&p).is_empty());
    assert!(target(&p, &free, "a") > 32 * MIB && target(&p, &free, "b") < 332 * MIB);
}

#[test]
fn a_context_that_waited_its_longest_is_admitted_with_what_is_left() {
    let input = PlanInput {
        capacity: 500 * MIB,
        contexts: vec![
            ctx("db", Class::Critical, State::Active, 200, 200),
            queued(ctx("old", Class::Extend, State::Waking, 32, 300), 0, true),
            queued(ctx("new", Class::Extend, State::Waking, 32, 300), 1, false),
        ],
    };
    let p = plan(&input);
    // 500 - 220 - 64 = 216 left: all of it to the overdue one.
    assert_eq!(target(&p, &input, "old"), (32 + 216) * MIB);
    assert_eq!(waits(&p), vec!["new"]);
}

#[test]
fn a_wake_whose_working_set_fits_is_admitted_without_waiting_for_its_growth_room() {
    let input = PlanInput {
        capacity: 500 * MIB,
        contexts: vec![
            ctx("db", Class::Critical, State::Active, 200, 200),
            queued(
                ctx("noise", Class::Extend, State::Waking, 32, 250),
                0,
                false,
            ),
        ],
    };
    let p = plan(&input);
    // 500 - 220 = 280 left: its 250 MiB working set fits, its 32 MiB of
    // growth room (282) does not quite: admitted with all that is left.
    assert!(waits(&p).is_empty(), "{:?}", p.actions);
    assert_eq!(target(&p, &input, "noise"), 280 * MIB);
    // Its working set itself not fitting, it waits.
    let mut bigger = input.clone();
    bigger.contexts[1].working_set = 290 * MIB;
    assert_eq!(waits(&plan(&bigger)), vec!["noise"]);
}

#[test]
fn where_a_class_serves_one_wake_at_once_the_next_waits_for_the_running_one_to_rest() {
    let one_at_once = |mut c: ContextInput| {
        if let Some(q) = c.queued.as_mut() {
            q.at_once = Some(1);
        }
        c
    };
    let wake = |k: &str, since: u64| {
        one_at_once(queued(
            ctx(k, Class::Extend, State::Waking, 32, 300),
            since,
            false,
        ))
    };
    // Room for all three wakes: only the first is let in.
    let mut input = PlanInput {
        capacity: 4096 * MIB,
        contexts: vec![
            ctx("db", Class::Critical, State::Active, 200, 200),
            wake("a", 1),
            wake("b", 2),
            wake("c", 3),
        ],
    };
    let p = plan(&input);
    assert_eq!(waits(&p), vec!["b", "c"]);
    assert_eq!(target(&p, &input, "a"), 332 * MIB);

    // `a` admitted and touching (active, not quiet): `b` waits, in spite of the room.
    input.contexts[1].queued = None;
    input.contexts[1].state = State::Active;
    input.contexts[1].usage = 332 * MIB;
    assert_eq!(waits(&plan(&input)), vec!["b", "c"]);
    // `a` rests between two touches (quiet): `b` is let in, `c` waits.
    input.contexts[1].quiet = true;
    assert_eq!(waits(&plan(&input)), vec!["c"]);
    // One that waited its longest is let in all the same, and takes the slot.
    input.contexts[1].quiet = false;
    input.contexts[3] = one_at_once(queued(
        ctx("c", Class::Extend, State::Waking, 32, 300),
        3,
        true,
    ));
    assert_eq!(waits(&plan(&input)), vec!["b"]);
    // No such limit: every wake that fits is let in.
    for c in &mut input.contexts {
        if let Some(q) = c.queued.as_mut() {
            q.at_once = None;
        }
    }
    assert!(waits(&plan(&input)).is_empty());
}

#[test]
fn a_critical_contexts_page_cache_is_kept_before_any_wake_is_admitted() {
    // A database: 60 MiB of its own pages recorded, 700 MiB charged (its
    // page cache and shared buffers).
    let input = PlanInput {
        capacity: 1024 * MIB,
        contexts: vec![
            ctx("db", Class::Critical, State::Active, 700, 60),
            queued(
                ctx("noise", Class::Extend, State::Waking, 32, 300),
                0,
                false,
            ),
        ],
    };
    let p = plan(&input);
    assert_eq!(target(&p, &input, "db"), 770 * MIB);
    assert_eq!(waits(&p), vec!["noise"], "770 + 332 > 1024");
}

fn any_context() -> impl Strategy<Value = ContextInput> {
    (
        "[a-z]{1,8}".prop_map(ContextId::new),
        prop_oneof![Just(Class::Critical), Just(Class::Extend)],
        prop_oneof![Just(State::Active), Just(State::Idle), Just(State::Waking)],
        0u64..4096,
        0u64..4096,
        0u64..4096,
        0u64..128,
        0u8..50,
        any::<bool>(),
        prop_oneof![
            Just(None),
            Just(Some(PrefetchReason::Woke)),
            Just(Some(PrefetchReason::Periodic))
        ],
        any::<bool>(),
        (
            prop::option::of(0u64..600),
            prop_oneof![Just(0u64), 0u64..4096],
        ),
    )
        .prop_map(
            |(
                key,
                class,
                state,
                usage,
                ws,
                swapped,
                floor,
                headroom,
                pressure,
                prefetch,
                keep,
                (wake, peak),
            )| {
                ContextInput {
                    key,
                    class,
                    state,
                    usage: usage * MIB,
                    working_set: ws * MIB,
                    swapped: swapped * MIB,
                    floor: floor * MIB,
                    headroom_pct: headroom,
                    under_pressure: pressure,
                    prefetch,
                    queued: None,
                    keep_while_room: keep,
                    quiet: keep,
                    expected_wake_in: wake.map(Duration::from_secs),
                    growth: GROWTH_BYTES,
                    rest_slack: REST_SLACK_BYTES,
                    // Only an extend class admits at the peak.
                    peak: if class == Class::Extend {
                        peak * MIB
                    } else {
                        0
                    },
                    // Some of them run in turn, their stretches begun at
                    // times as random.
                    in_turn: (class == Class::Extend && peak > 0)
                        .then(|| Duration::from_secs(usage % 7)),
                }
            },
        )
}

proptest! {
    #[test]
    fn plan_never_exceeds_capacity_unless_flagged(capacity in 0u64..16384, cs in prop::collection::vec(any_context(), 0..12)) {
        let input = PlanInput { capacity: capacity * MIB, contexts: cs };
        let p = plan(&input);
        let sum: u64 = p.targets.iter().sum();
        prop_assert!(p.overcommitted || sum <= input.capacity, "sum {} > capacity {}", sum, input.capacity);
        prop_assert_eq!(p.targets.len(), input.contexts.len());
    }

    #[test]
    fn plan_never_pushes_out_or_limits_a_critical_context(capacity in 0u64..16384, cs in prop::collection::vec(any_context(), 0..12)) {
        let input = PlanInput { capacity: capacity * MIB, contexts: cs };
        for a in plan(&input).actions {
            let keyed: Vec<&ContextInput> = input.contexts.iter().filter(|c| &c.key == a.key()).collect();
            prop_assert!(!keyed.is_empty(), "action on a context not in the input: {:?}", a);
            if matches!(a, Action::PushOut { .. } | Action::Limit { .. }) {
                // Keys may repeat in generated input; the acted-on one must be extend.
                prop_assert!(keyed.iter().any(|c| c.class == Class::Extend), "{:?}", a);
            }
        }
    }

    #[test]
    fn critical_targets_are_never_below_their_usage(capacity in 0u64..16384, cs in prop::collection::vec(any_context(), 0..12)) {
        let input = PlanInput { capacity: capacity * MIB, contexts: cs };
        let p = plan(&input);
        for (c, t) in input.contexts.iter().zip(&p.targets) {
            if c.class == Class::Critical {
                prop_assert!(*t >= c.usage.max(c.working_set));
            }
        }
    }
}
