//! The DRAM planner: a pure function from what memext knows about every
//! selected context and the capacity it may fill to a DRAM target per context
//! and the actions that move toward them.
//!
//! Order of service: critical contexts get their working set plus headroom
//! first, always; every extend context gets at least its floor; what remains
//! goes to waking and prefetched contexts, then to active ones, and what is
//! still left is split among the active ones. Idle extend contexts are held at
//! their floor. Critical contexts are never pushed out or
//! limited; when one shows pressure, page-out and prefetch are throttled.

use crate::model::State;
use crate::predict::PrefetchReason;
use crate::{Class, ContextId};

/// Room an active extend context gets above its current use, at least.
pub const GROWTH_BYTES: u64 = 32 << 20;
/// An idle context within this much of its target is not pushed again.
pub const PUSH_SLACK_BYTES: u64 = 8 << 20;

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
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PlanInput {
    /// DRAM the selected contexts may use together.
    pub capacity: u64,
    pub contexts: Vec<ContextInput>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum Action {
    /// Push an idle extend context out until `keep` bytes remain.
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
}

impl Action {
    pub fn key(&self) -> &ContextId {
        match self {
            Action::PushOut { key, .. }
            | Action::BringBack { key, .. }
            | Action::Limit { key, .. }
            | Action::Protect { key, .. } => key,
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
}

fn with_headroom(bytes: u64, pct: u8) -> u64 {
    bytes.saturating_add(bytes / 100 * u64::from(pct))
}

/// What a context would need to run unhindered.
fn demand(c: &ContextInput) -> u64 {
    let base = c.usage.max(c.working_set);
    match (c.class, c.state, c.prefetch) {
        (Class::Critical, _, _) => with_headroom(base, c.headroom_pct),
        (Class::Extend, State::Idle, None) => c.floor,
        (Class::Extend, State::Active, None) => {
            let grown = with_headroom(c.usage, c.headroom_pct);
            grown.max(c.usage.saturating_add(GROWTH_BYTES))
        }
        // Waking or prefetched: its working set, plus the room an active context
        // gets, since its other pages and the swap cache fill count too.
        (Class::Extend, _, _) => with_headroom(base, c.headroom_pct)
            .max(base.saturating_add(GROWTH_BYTES))
            .max(c.floor),
    }
}

/// Serving order of extend contexts beyond their floor: waking and
/// prefetched before active.
fn rank(c: &ContextInput) -> u8 {
    match (c.state, c.prefetch) {
        (State::Waking, _) | (_, Some(PrefetchReason::Woke)) => 0,
        (_, Some(_)) => 1,
        (State::Active, None) => 2,
        (State::Idle, None) => 3,
    }
}

pub fn plan(input: &PlanInput) -> Plan {
    let cs = &input.contexts;
    let mut room = Room {
        targets: vec![0u64; cs.len()],
        left: input.capacity,
        overcommitted: false,
    };
    // 1. Critical contexts, in full.
    room.give_each(cs, |c| c.class == Class::Critical, demand);
    // 2. Every extend context's floor (or less, if it needs less).
    room.give_each(cs, |c| c.class == Class::Extend, |c| c.floor.min(demand(c)));
    // 3. The rest to extend contexts above their floor, by rank.
    for r in 0..=3 {
        room.share_rank(cs, r);
    }
    // 4. What nobody needs now is split evenly among the active extend
    //    contexts, so one that allocates fast between two ticks grows into free
    //    DRAM instead of reclaiming its own pages at a limit set a tick ago.
    //    The sum still fits: a context that wakes takes its room back next tick.
    let active: Vec<usize> = (0..cs.len())
        .filter(|&i| cs[i].class == Class::Extend && rank(&cs[i]) == 2)
        .collect();
    if let Some(each) = room.left.checked_div(active.len() as u64) {
        for &i in &active {
            room.targets[i] += each;
        }
    }
    let throttle = cs
        .iter()
        .any(|c| c.class == Class::Critical && c.under_pressure);
    Plan {
        actions: actions(cs, &room.targets),
        targets: room.targets,
        throttle,
        overcommitted: room.overcommitted,
    }
}

/// DRAM handed out so far.
struct Room {
    targets: Vec<u64>,
    left: u64,
    overcommitted: bool,
}

impl Room {
    /// Gives each context that `which` selects `amount` of it, whether it fits
    /// or not (what does not fit is flagged).
    fn give_each(
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

    /// Serves the extend contexts of rank `r` above what they have: in full if
    /// it fits, else in proportion to what each still needs.
    fn share_rank(&mut self, cs: &[ContextInput], r: u8) {
        let group: Vec<usize> = (0..cs.len())
            .filter(|&i| cs[i].class == Class::Extend && rank(&cs[i]) == r)
            .collect();
        let want: Vec<u64> = group
            .iter()
            .map(|&i| demand(&cs[i]).saturating_sub(self.targets[i]))
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

/// The actions that move each context toward its target.
fn actions(cs: &[ContextInput], targets: &[u64]) -> Vec<Action> {
    let mut actions = Vec::new();
    for (c, &target) in cs.iter().zip(targets) {
        let key = c.key.clone();
        if c.class == Class::Critical {
            actions.push(Action::Protect { key, bytes: target });
            continue;
        }
        if let Some(reason) = c.prefetch.filter(|_| c.swapped > 0) {
            actions.push(Action::BringBack {
                key: key.clone(),
                reason,
            });
        }
        if c.state == State::Idle && c.prefetch.is_none() && c.usage > target + PUSH_SLACK_BYTES {
            actions.push(Action::PushOut {
                key: key.clone(),
                keep: target,
            });
        }
        actions.push(Action::Limit { key, bytes: target });
    }
    actions
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MIB: u64 = 1 << 20;

    fn ctx(key: &str, class: Class, state: State, usage_mib: u64, ws_mib: u64) -> ContextInput {
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
        }
    }

    fn target(p: &Plan, input: &PlanInput, key: &str) -> u64 {
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
        )
            .prop_map(
                |(key, class, state, usage, ws, swapped, floor, headroom, pressure, prefetch)| {
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
}
