//! A class's CPU budget while a critical context runs (`cpu_max_milli`):
//! the class's contexts together may use at most that much CPU, each
//! running one its share, so that the page faults, swap-ins and reclaim of
//! waking noise cannot take more than that from a critical workload that
//! fills the CPUs. A CPU weight does not bound it there (bench/peers,
//! session 31: at weight 10 against 1024 the noise took as much CPU as at
//! 1024); a quota does (session 32).

use crate::command::Command;
use crate::context::ContextState;
use crate::model::State;
use crate::{Class, Instant};

/// The period quotas are given in, µs: the kernel's default CFS period
/// (and Docker's `--cpus`).
pub const CPU_PERIOD_US: u64 = 100_000;
/// The least quota the kernel takes, µs.
pub const MIN_QUOTA_US: u64 = 1_000;

/// Whether `t` takes CPU now: waking, or active and not quiet, and not
/// waiting frozen for admission. (Counted as running while it slept
/// between two touches, a context kept a share of the budget it did not
/// use: bench/peers' noise woke into a tenth of it, and its touch crept
/// on until it looked quiet and was squeezed, its read-back with it.)
pub fn runs_now(t: &ContextState, now: Instant) -> bool {
    t.waiting_since.is_none()
        && match t.model.state {
            State::Waking => true,
            State::Active => !t.is_quiet(now),
            State::Idle => false,
        }
}

/// Whether a critical context runs now: what the extend class's CPU
/// budget and `wakes_at_once` protect.
pub fn critical_runs<'a>(
    mut contexts: impl Iterator<Item = &'a ContextState>,
    now: Instant,
) -> bool {
    contexts.any(|t| t.class == Class::Critical && runs_now(t, now))
}

/// The CPU quota of every extend context whose class has a CPU budget: none while
/// no critical context runs; else the budget shared among the class's
/// running contexts, and the whole budget for one that is not running (its
/// next start is one, until the next tick shares it).
pub fn cpu_caps<'a, I>(contexts: I, now: Instant) -> Vec<Command>
where
    I: Iterator<Item = &'a ContextState> + Clone,
{
    let critical_runs = critical_runs(contexts.clone(), now);
    // Only the extend class has a budget (the policy refuses one for critical).
    let extend = || contexts.clone().filter(|t| t.class == Class::Extend);
    let running = |t: &ContextState| runs_now(t, now);
    let running_extend =
        u64::try_from(extend().filter(|t| running(t)).count().max(1)).unwrap_or(u64::MAX);
    extend()
        .filter_map(|t| {
            let milli = t.params.cpu_max_milli?;
            let quota_us = critical_runs.then(|| {
                let budget = u64::from(milli) * CPU_PERIOD_US / 1000;
                let share = if running(t) {
                    budget / running_extend
                } else {
                    budget
                };
                share.max(MIN_QUOTA_US)
            });
            Some(Command::CpuMax {
                id: t.id.clone(),
                quota_us,
            })
        })
        .collect()
}

/// The quota to write where the context's owner set one of its own
/// (`own`, None: none): memext's cap never loosens it, and lifting the cap
/// puts the owner's back. Both per the same 100 ms period (Docker's
/// `--cpus` uses it too).
pub fn within_own(quota_us: Option<u64>, own: Option<u64>) -> Option<u64> {
    match (quota_us, own) {
        (Some(q), Some(o)) => Some(q.min(o)),
        (q, None) => q,
        (None, o) => o,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::context::{ClassParams, PushOutWhen, WAKE_CPU_WEIGHT};
    use crate::ContextId;

    fn params(cpu_max_milli: Option<u32>) -> ClassParams {
        ClassParams {
            idle_after: Duration::from_secs(5),
            floor: 0,
            headroom_pct: 0,
            pageout_bandwidth: 1 << 30,
            prefetch_bandwidth: 1 << 30,
            map_back: false,
            map_kept: false,
            cpu_weight: None,
            wake_cpu_weight: WAKE_CPU_WEIGHT,
            resident_cpu_weight: None,
            cpu_max_milli,
            admit_within: Duration::ZERO,
            push_out: PushOutWhen::Idle,
            fast_wakes: false,
            keep_anon: false,
            wakes_at_once: None,
            cpu_idle: false,
            admit_at_peak: false,
        }
    }

    fn ctx(name: &str, class: Class, milli: Option<u32>, state: State) -> ContextState {
        let mut t = ContextState::new(ContextId::new(name), class, params(milli), Duration::ZERO);
        t.model.state = state;
        t.model.last_activity = NOW;
        t
    }

    const NOW: Duration = Duration::from_secs(10);

    fn quotas(contexts: &[ContextState]) -> Vec<(&str, Option<u64>)> {
        let caps = cpu_caps(contexts.iter(), NOW);
        let by_name = |id: &ContextId| {
            contexts
                .iter()
                .find(|t| &t.id == id)
                .map_or("?", |t| t.id.as_str())
        };
        caps.iter()
            .map(|c| match c {
                Command::CpuMax { id, quota_us } => (by_name(id), *quota_us),
                other => panic!("not a CPU cap: {other:?}"),
            })
            .collect()
    }

    #[test]
    fn the_running_noise_shares_the_budget_while_a_critical_context_runs() {
        let mut hosts = vec![
            ctx("/db", Class::Critical, None, State::Active),
            ctx("/a", Class::Extend, Some(300), State::Waking),
            ctx("/b", Class::Extend, Some(300), State::Active),
            ctx("/c", Class::Extend, Some(300), State::Idle),
        ];
        assert_eq!(
            quotas(&hosts),
            vec![
                ("/a", Some(15_000)),
                ("/b", Some(15_000)),
                ("/c", Some(30_000)), // its start is one: the whole budget until shared
            ]
        );
        hosts[2].waiting_since = Some(Duration::ZERO); // frozen for admission: not running
        assert_eq!(quotas(&hosts)[0], ("/a", Some(30_000)));
    }

    #[test]
    fn a_context_resting_between_two_touches_takes_no_share_and_no_critical_context_is_protected_while_it_rests(
    ) {
        let mut hosts = vec![
            ctx("/db", Class::Critical, None, State::Active),
            ctx("/a", Class::Extend, Some(300), State::Waking),
            ctx("/b", Class::Extend, Some(300), State::Active),
        ];
        // `b` touched its heap and sleeps (quiet): `a` gets the budget.
        hosts[2].model.last_activity = NOW - Duration::from_secs(3);
        assert_eq!(
            quotas(&hosts),
            vec![("/a", Some(30_000)), ("/b", Some(30_000))]
        );
        // The critical context quiet too: nothing to protect, no cap.
        hosts[0].model.last_activity = NOW - Duration::from_secs(3);
        assert_eq!(quotas(&hosts), vec![("/a", None), ("/b", None)]);
    }

    #[test]
    fn an_owners_own_quota_is_never_loosened_and_comes_back_when_the_cap_is_lifted() {
        assert_eq!(within_own(Some(30_000), None), Some(30_000));
        assert_eq!(within_own(Some(30_000), Some(10_000)), Some(10_000));
        assert_eq!(within_own(Some(30_000), Some(50_000)), Some(30_000));
        assert_eq!(within_own(None, Some(10_000)), Some(10_000));
        assert_eq!(within_own(None, None), None);
    }

    #[test]
    fn no_cap_while_no_critical_context_runs() {
        let hosts = [
            ctx("/db", Class::Critical, None, State::Idle),
            ctx("/a", Class::Extend, Some(300), State::Waking),
        ];
        assert_eq!(quotas(&hosts), vec![("/a", None)]);
    }

    #[test]
    fn a_class_without_a_budget_is_left_as_it_is_and_a_share_is_never_below_the_kernels_least() {
        let mut hosts = vec![ctx("/db", Class::Critical, None, State::Active)];
        hosts.extend(
            (0..50).map(|i| ctx(&format!("/n{i}"), Class::Extend, Some(10), State::Active)),
        );
        hosts.push(ctx("/free", Class::Extend, None, State::Active));
        let q = quotas(&hosts);
        assert_eq!(q.len(), 50, "the one without a budget gets no command");
        assert!(
            q.iter().all(|(_, quota)| *quota == Some(MIN_QUOTA_US)),
            "{q:?}"
        );
    }
}
