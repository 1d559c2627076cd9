//! The room the extend contexts' limits leave the critical ones, on a host
//! where those limits are the critical contexts' only protection (cgroup v1
//! has no `memory.min`): the extend limits never sum past the capacity less
//! what the critical contexts are planned, at any point of a tick's writes.
//!
//! Without it, a wake's limit was raised before the others' were lowered
//! (and a lowered limit was held at the usage while its pages moved): the
//! extend limits summed past the room, the parent cgroup reached its cap,
//! and the kernel's reclaim at the parent took from every child, the
//! critical one included (bench/peers' quick redis x burst, sampled every
//! 0.1 s: the critical Redis fell from 177 to 96 MiB within a second each
//! time, 11.7k major faults in a 12 s window, 43% of them while the extend
//! limits summed past the room).

use std::collections::BTreeMap;

use crate::context::ContextState;
use crate::{Class, ContextId};

/// The running sum of the extend contexts' limits against the room the
/// critical ones leave; `None` where nothing is to be kept (no critical
/// context, or a host whose critical contexts are protected by the kernel).
#[derive(Debug)]
pub struct LimitRoom {
    /// Room left below the sum: negative while the limits exceed it.
    left: i128,
    /// Each extend context's limit as the writes so far leave it.
    limits: BTreeMap<ContextId, u64>,
}

impl LimitRoom {
    /// The room at the start of a tick's writes: `capacity` less each
    /// critical context's plan (or its usage, if more), less each extend
    /// context's limit in force (what memext last wrote; its usage before
    /// any write).
    pub fn new<'a>(
        capacity: u64,
        contexts: impl Iterator<Item = &'a ContextState> + Clone,
    ) -> Option<Self> {
        let critical: u64 = contexts
            .clone()
            .filter(|t| t.class == Class::Critical)
            .map(|t| t.target.max(t.memory.usage))
            .sum();
        if critical == 0 {
            return None;
        }
        let limits: BTreeMap<ContextId, u64> = contexts
            .filter(|t| t.class == Class::Extend)
            .map(|t| (t.id.clone(), t.limit_in_force()))
            .collect();
        let used: u128 = limits.values().map(|&b| u128::from(b)).sum();
        Some(Self {
            left: i128::from(capacity) - i128::from(critical) - used as i128,
            limits,
        })
    }

    /// The limit to write for `id` in place of `bytes`: a raise only as far
    /// as the room allows (never below the limit in force); a lowering as
    /// asked. `None`: nothing to write (a raise with no room at all).
    pub fn fit(&mut self, id: &ContextId, bytes: u64) -> Option<u64> {
        let Some(now) = self.limits.get_mut(id) else {
            return Some(bytes);
        };
        let granted = if bytes > *now {
            let room = u64::try_from(self.left.max(0)).unwrap_or(u64::MAX);
            let raised = bytes.min(now.saturating_add(room));
            if raised <= *now {
                return None;
            }
            raised
        } else {
            bytes
        };
        self.left -= i128::from(granted) - i128::from(*now);
        *now = granted;
        Some(granted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::ClassParams;
    use std::time::Duration;

    const MIB: u64 = 1 << 20;

    fn ctx(id: &str, class: Class, usage: u64, limit: Option<u64>, target: u64) -> ContextState {
        let params = ClassParams {
            floor: 16 * MIB,
            headroom_pct: 10,
            idle_after: Duration::from_secs(10),
            pageout_bandwidth: 0,
            prefetch_bandwidth: 0,
            map_back: false,
            map_kept: false,
            cpu_weight: None,
            wake_cpu_weight: 100,
            resident_cpu_weight: None,
            cpu_max_milli: None,
            admit_within: Duration::ZERO,
            push_out: crate::context::PushOutWhen::Idle,
            fast_wakes: false,
            keep_anon: false,
            wakes_at_once: None,
            cpu_idle: false,
            admit_at_peak: false,
        };
        let mut t = ContextState::new(id.into(), class, params, Duration::ZERO);
        t.memory.usage = usage;
        t.limit = limit;
        t.target = target;
        t
    }

    /// 512 MiB, a critical context planned 180 MiB, two extend contexts
    /// limited to 150 and 100: 82 MiB of room. A wake's raise to 300 MiB
    /// gets the 82; once the other is lowered to 16 MiB, the rest.
    #[test]
    fn a_raise_gets_only_the_room_the_critical_context_leaves() {
        let cs = [
            ctx("/crit", Class::Critical, 170 * MIB, None, 180 * MIB),
            ctx("/a", Class::Extend, 100 * MIB, Some(150 * MIB), 0),
            ctx("/b", Class::Extend, 100 * MIB, Some(100 * MIB), 0),
        ];
        let mut room = LimitRoom::new(512 * MIB, cs.iter()).expect("a critical context");
        let b: ContextId = "/b".into();
        let a: ContextId = "/a".into();
        assert_eq!(room.fit(&b, 300 * MIB), Some(182 * MIB));
        assert_eq!(room.fit(&b, 300 * MIB), None, "no room left");
        assert_eq!(room.fit(&a, 16 * MIB), Some(16 * MIB));
        assert_eq!(room.fit(&b, 300 * MIB), Some(300 * MIB));
    }

    #[test]
    fn without_a_critical_context_nothing_is_kept() {
        let cs = [ctx("/a", Class::Extend, 100 * MIB, Some(150 * MIB), 0)];
        assert!(LimitRoom::new(512 * MIB, cs.iter()).is_none());
    }

    /// A critical context whose pages were already reclaimed (usage 90
    /// MiB) keeps the room of its plan (180 MiB), not of its usage.
    #[test]
    fn the_critical_context_keeps_the_room_of_its_plan() {
        let cs = [
            ctx("/crit", Class::Critical, 90 * MIB, None, 180 * MIB),
            ctx("/a", Class::Extend, 100 * MIB, Some(100 * MIB), 0),
        ];
        let mut room = LimitRoom::new(512 * MIB, cs.iter()).expect("a critical context");
        assert_eq!(room.fit(&"/a".into(), 512 * MIB), Some(332 * MIB));
    }
}
