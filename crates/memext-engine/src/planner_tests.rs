//! The planner on hand-made inputs (generated ones: `planner_prop_tests`).
use super::*;
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
pub(super) fn pushed_out(p: &Plan, key: &str) -> bool {
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

    // 650 - 3 floors (96) - busy (232) = 322 left, 32 of it kept free
    // (as told; by default room for the largest, 1/16 of 650): 290.
    let tight = PlanInput {
        capacity: 650 * MIB,
        contexts,
    };
    let p = plan_keeping(&tight, 32 * MIB);
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
