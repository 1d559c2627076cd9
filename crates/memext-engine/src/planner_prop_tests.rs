//! The planner on generated inputs (proptest): within the capacity unless
//! flagged, and a critical context never pushed out, limited or planned
//! below its usage.

use super::tests::MIB;
use super::*;
use proptest::prelude::*;
use std::time::Duration;

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
