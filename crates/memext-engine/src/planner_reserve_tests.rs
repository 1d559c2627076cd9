//! The room the planner keeps free for the next wake on a host meant to
//! be full: as told (`daemon.keep_free`), or by default room for the
//! largest resting function.

use super::tests::{ctx, target, MIB};
use super::*;
use std::time::Duration;

/// The room resting functions leave free is the planner's to be told
/// (`daemon.keep_free`): what they keep shrinks by what is kept free, and
/// no more than half the capacity is ever kept so.
#[test]
fn resting_functions_leave_the_room_they_are_told_to_keep_free() {
    let resting = |key: &str, wake_s: u64| ContextInput {
        floor: 4 * MIB,
        keep_while_room: true,
        expected_wake_in: Some(Duration::from_secs(wake_s)),
        ..ctx(key, Class::Extend, State::Idle, 60, 60)
    };
    // 200 - 2 floors (8) = 192: with the default reserve (32) both keep
    // their 60 (with 2 of slack); keeping 96 free, 96 is left above the
    // floors: the sooner one keeps its 56 above its floor and 2 of slack,
    // the other 38 above its floor.
    let input = PlanInput {
        capacity: 200 * MIB,
        contexts: vec![resting("soon", 5), resting("later", 50)],
    };
    let default = plan(&input);
    assert_eq!(
        target(&default, &input, "later"),
        62 * MIB,
        "{:?}",
        default.room
    );
    let keeping = plan_keeping(&input, 96 * MIB);
    assert_eq!(keeping.room.reserve, 96 * MIB);
    assert_eq!(
        target(&keeping, &input, "soon"),
        62 * MIB,
        "{:?}",
        keeping.room
    );
    assert_eq!(
        target(&keeping, &input, "later"),
        4 * MIB + 38 * MIB,
        "{:?}",
        keeping.room
    );
    // At most half the capacity is kept free.
    assert_eq!(plan_keeping(&input, 1 << 40).room.reserve, 100 * MIB);
}

/// By default the room kept free is the largest resting function's whole
/// size (what it holds and has out), between 1/32 and 1/16 of the capacity:
/// room for any one of them to wake into.
#[test]
fn by_default_the_room_kept_free_fits_the_largest_function() {
    let resting = |key: &str, usage: u64, swapped: u64| ContextInput {
        swapped: swapped * MIB,
        floor: 4 * MIB,
        keep_while_room: true,
        expected_wake_in: Some(Duration::from_secs(10)),
        ..ctx(key, Class::Extend, State::Idle, usage, usage + swapped)
    };
    let input = |capacity_mib: u64, largest: (u64, u64)| PlanInput {
        capacity: capacity_mib * MIB,
        contexts: vec![
            resting("small", 40, 0),
            resting("large", largest.0, largest.1),
        ],
    };
    // 2048 MiB: 1/32 is 64, 1/16 128; the largest holds 30 and has 60 out.
    assert_eq!(default_reserve(&input(2048, (30, 60))), 90 * MIB);
    assert_eq!(plan(&input(2048, (30, 60))).room.reserve, 90 * MIB);
    // Never less than 1/32, never more than 1/16.
    assert_eq!(default_reserve(&input(2048, (20, 0))), 64 * MIB);
    assert_eq!(default_reserve(&input(2048, (300, 100))), 128 * MIB);
    // Without a context that keeps what it holds, the 1/32 share.
    let idle = PlanInput {
        capacity: 2048 * MIB,
        contexts: vec![ctx("a", Class::Extend, State::Idle, 300, 300)],
    };
    assert_eq!(default_reserve(&idle), 64 * MIB);
}
