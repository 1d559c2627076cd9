//! The decisions of a tick on simulated traces: each test drives the engine
//! as the daemon does (samples in, commands out, outcomes back) and asserts a
//! decision that used to be made inside the actuator.

use std::time::Duration;

use super::*;
use crate::context::{MemorySample, PushOutWhen, Sample, REASSERT};
use crate::model::Transition;

const MIB: u64 = 1 << 20;

fn params() -> EngineParams {
    EngineParams {
        prefetch_lead: Duration::from_secs(3),
        ws_interval: Duration::from_secs(10),
        keep_free: None,
    }
}

/// `class(16)` on a host meant to be full (`push_out = "when-needed"`).
fn full_host() -> ClassParams {
    ClassParams {
        push_out: PushOutWhen::Needed,
        ..class(16)
    }
}

fn class(floor_mib: u64) -> ClassParams {
    ClassParams {
        idle_after: Duration::from_secs(5),
        floor: floor_mib * MIB,
        headroom_pct: 10,
        pageout_bandwidth: 400 * MIB,
        prefetch_bandwidth: 800 * MIB,
        map_back: true,
        map_kept: false,
        cpu_weight: None,
        wake_cpu_weight: WAKE_CPU_WEIGHT,
        resident_cpu_weight: None,
        cpu_max_milli: None,
        admit_within: Duration::ZERO,
        push_out: PushOutWhen::Idle,
        fast_wakes: false,
        keep_anon: false,
        wakes_at_once: None,
        cpu_idle: false,
        admit_at_peak: false,
    }
}

const HOST: HostFacts = HostFacts {
    capacity: 1024 * MIB,
    next_swap_is_zram: false,
    limits_protect: false,
    background_reclaim: false,
    charge_room: 0,
};

fn s(secs: f64) -> Instant {
    Duration::from_secs_f64(secs)
}

/// A simulated context: its CPU clock and memory, advanced by the test.
struct Ctx {
    id: ContextId,
    cpu: Duration,
    usage: u64,
    swapped: u64,
    majflt: u64,
    psi: Option<f64>,
    unswappable: u64,
}

impl Ctx {
    fn new(name: &str, usage_mib: u64) -> Self {
        Self {
            id: ContextId::from(name),
            cpu: Duration::ZERO,
            usage: usage_mib * MIB,
            swapped: 0,
            majflt: 0,
            psi: None,
            unswappable: 0,
        }
    }

    fn sample(&self, at: f64) -> Sample {
        Sample {
            at: s(at),
            pids: vec![100],
            memory: MemorySample {
                usage: self.usage,
                resident: self.usage,
                swapped: self.swapped,
                // The kernel counts a major fault among all faults too.
                pgfault: self.majflt,
                pgmajfault: self.majflt,
                unswappable: self.unswappable,
            },
            cpu: Some(self.cpu),
            psi_some_avg10: self.psi,
        }
    }
}

fn never_busy(_: &ContextId) -> bool {
    false
}

/// Observes every context once, recording its working set (all it uses,
/// in one chunk) where the engine asks for it; each one's transition.
fn observe_all(e: &mut Engine, ctxs: &[&Ctx], at: f64) -> Vec<Option<Transition>> {
    let mut transitions = Vec::new();
    for c in ctxs {
        let o = e.observe(&c.id, c.sample(at), false);
        if o.wants_working_set {
            e.record_working_set(&c.id, s(at), &[(100, vec![(0, c.usage)])]);
        }
        transitions.push(o.transition);
    }
    transitions
}

/// Observes every context once (`observe_all`), decides, and reports every
/// command done.
fn tick(e: &mut Engine, ctxs: &[&Ctx], at: f64) -> (Vec<Option<Transition>>, Vec<Command>) {
    let transitions = observe_all(e, ctxs, at);
    let d = e.decide(s(at), &HOST, &never_busy);
    for cmd in &d.commands {
        e.executed(cmd, Outcome::Done, s(at));
    }
    (transitions, d.commands)
}

/// Two between-ticks readings of a watched context's CPU: at `at.0`
/// nothing new, at `at.1` `cpu_ms` more. What each reported.
fn poll_twice(
    e: &mut Engine,
    c: &mut Ctx,
    at: (f64, f64),
    cpu_ms: u64,
) -> (Option<Transition>, Option<Transition>) {
    let before = e.poll(&c.id, s(at.0), c.cpu);
    c.cpu += Duration::from_millis(cpu_ms);
    (before, e.poll(&c.id, s(at.1), c.cpu))
}

/// Ticks every 0.5 s from 0 to 70 s, `c` busy for one second every 15 s
/// from 10 s (calls at 10, 25, 40, 55 and 70 s); `each` is given every
/// tick's time and commands after it.
fn every_15_s(
    e: &mut Engine,
    c: &mut Ctx,
    mut each: impl FnMut(&Engine, &mut Ctx, f64, &[Command]),
) {
    let mut t = 0.0;
    while t <= 70.0 {
        if t >= 10.0 && (t - 10.0) % 15.0 < 1.0 {
            c.cpu += Duration::from_millis(250);
        }
        let (_, cmds) = tick(e, &[&*c], t);
        each(e, c, t, &cmds);
        t += 0.5;
    }
}

/// The first call of `every_15_s` at or after `at`.
fn next_call_after(at: f64) -> f64 {
    10.0 + 15.0 * ((at - 10.0) / 15.0).ceil()
}

fn push_outs(cmds: &[Command]) -> Vec<&PushOut> {
    cmds.iter()
        .filter_map(|c| match c {
            Command::PushOut(p) => Some(p),
            _ => None,
        })
        .collect()
}

fn limits(cmds: &[Command]) -> Vec<u64> {
    cmds.iter()
        .filter_map(|c| match c {
            Command::Limit { bytes, .. } => Some(*bytes),
            _ => None,
        })
        .collect()
}

fn bring_backs(cmds: &[Command]) -> Vec<&BringBack> {
    cmds.iter()
        .filter_map(|c| match c {
            Command::BringBack(b) => Some(b),
            _ => None,
        })
        .collect()
}

#[test]
fn a_context_that_sleeps_is_pushed_out_once_and_brought_back_when_it_wakes() {
    let mut e = Engine::new(params());
    let mut c = Ctx::new("/sleeper", 256);
    assert!(e.track(c.id.clone(), Class::Extend, class(16), s(0.0)));
    let mut pushed = Vec::new();
    for i in 0..=8 {
        let (_, cmds) = tick(&mut e, &[&c], f64::from(i));
        pushed.extend(push_outs(&cmds).into_iter().cloned());
    }
    // Idle after 5 s: pushed out to its floor, keeping its hottest 16 MiB
    // (8 chunks of 2 MiB), once, though it stays above the floor until the
    // mover is done.
    assert_eq!(pushed.len(), 1, "{pushed:?}");
    assert_eq!(pushed[0].keep_bytes, 16 * MIB);
    assert_eq!(pushed[0].keep.len(), 8);
    assert!(e.get(&c.id).is_some_and(|t| t.out));
    c.swapped = 240 * MIB;
    c.usage = 16 * MIB;
    tick(&mut e, &[&c], 9.0);
    assert_eq!(e.watched(), vec![c.id.clone()]);
    // It wakes between ticks: 10 ms of CPU in 20 ms.
    let polls = poll_twice(&mut e, &mut c, (9.5, 9.52), 10);
    assert_eq!(polls, (None, Some(Transition::Woke)), "a wake");
    let cmds = e.serve_wake(&c.id, s(9.52), &HOST, &never_busy);
    // Its limit is raised before anything is read back, to an upper bound of
    // what it can need: its working set plus all it has in swap.
    assert_eq!(
        cmds[0],
        Command::Limit {
            id: c.id.clone(),
            bytes: (256 + 240) * MIB
        }
    );
    let b = bring_backs(&cmds);
    assert_eq!(b.len(), 1);
    assert_eq!(b[0].reason, PrefetchReason::Woke);
    assert!(!b[0].map_back && !b[0].from_the_end);
    assert_eq!(
        b[0].order.len(),
        128,
        "the whole working set, hottest first"
    );
    for cmd in &cmds {
        e.executed(cmd, Outcome::Done, s(9.52));
    }
    let t = e.get(&c.id).expect("tracked");
    assert!(!t.out && t.held.is_none(), "a woken context is not held");
    // While it settles, what is still in swap is not read again each tick
    // (the woken process faults in what it touches).
    c.cpu += Duration::from_millis(500);
    c.swapped = 40 * MIB;
    let (_, cmds) = tick(&mut e, &[&c], 10.0);
    assert_eq!(e.get(&c.id).map(|t| t.model.state), Some(State::Waking));
    assert!(bring_backs(&cmds).is_empty(), "read back once: {cmds:?}");
}

/// `n` contexts of 300 MiB named `/{prefix}0`..., idle and pushed out by 7 s,
/// then woken together (1 s of CPU, 284 MiB in swap) but not yet observed.
fn pushed_out_then_woken(e: &mut Engine, prefix: &str, n: usize, p: &ClassParams) -> Vec<Ctx> {
    let mut cs: Vec<Ctx> = (0..n)
        .map(|i| Ctx::new(&format!("/{prefix}{i}"), 300))
        .collect();
    for c in &cs {
        e.track(c.id.clone(), Class::Extend, p.clone(), s(0.0));
    }
    for i in 0..=7 {
        let refs: Vec<&Ctx> = cs.iter().collect();
        tick(e, &refs, f64::from(i));
    }
    assert!(cs.iter().all(|c| e.get(&c.id).is_some_and(|t| t.out)));
    for c in &mut cs {
        c.usage = 16 * MIB;
        c.swapped = 284 * MIB;
        c.cpu += Duration::from_secs(1);
    }
    cs
}

#[test]
fn contexts_waking_together_are_all_brought_back_raised_limits_first() {
    let mut e = Engine::new(params());
    let cs = pushed_out_then_woken(&mut e, "n", 3, &class(16));
    let refs: Vec<&Ctx> = cs.iter().collect();
    let (tr, cmds) = tick(&mut e, &refs, 8.0);
    assert!(tr.iter().all(|t| *t == Some(Transition::Woke)), "{tr:?}");
    let b = bring_backs(&cmds);
    assert_eq!(b.len(), 3, "{cmds:?}");
    let first_bring_back = cmds
        .iter()
        .position(|c| matches!(c, Command::BringBack(_)))
        .expect("bring-backs");
    let raised: Vec<usize> = cmds
        .iter()
        .enumerate()
        .filter(|(_, c)| matches!(c, Command::Limit { bytes, .. } if *bytes >= 16 * MIB))
        .map(|(i, _)| i)
        .collect();
    assert!(raised.iter().all(|&i| i < first_bring_back), "{cmds:?}");
    // Three 300 MiB working sets do not fit in 1 GiB: the targets share it.
    let total: u64 = cs
        .iter()
        .map(|c| e.get(&c.id).map_or(0, |t| t.target))
        .sum();
    assert!(total <= HOST.capacity, "{total}");
}

#[test]
fn a_wake_from_zram_is_read_back_from_the_end() {
    let mut e = Engine::new(params());
    let mut c = Ctx::new("/z", 64);
    e.track(c.id.clone(), Class::Extend, class(16), s(0.0));
    for i in 0..=6 {
        tick(&mut e, &[&c], f64::from(i));
    }
    c.swapped = 48 * MIB;
    c.cpu += Duration::from_millis(50);
    let zram = HostFacts {
        next_swap_is_zram: true,
        ..HOST
    };
    e.observe(&c.id, c.sample(7.0), false);
    let d = e.decide(s(7.0), &zram, &never_busy);
    let b = bring_backs(&d.commands);
    assert!(b.len() == 1 && b[0].from_the_end, "{:?}", d.commands);
}

/// A critical context whose processes all map the same shared memory (a
/// database's shared buffers in every backend) records it once per process;
/// what it is protected for is still at most all it has, and a waking extend
/// context is not kept waiting for room that was never needed.
#[test]
fn shared_memory_in_many_processes_counts_once_toward_a_working_set() {
    let mut e = Engine::new(params());
    let crit = Ctx::new("/db", 300);
    let mut noise = Ctx::new("/noise", 64);
    e.track(crit.id.clone(), Class::Critical, class(0), s(0.0));
    let queued = ClassParams {
        admit_within: Duration::from_secs(10),
        ..class(16)
    };
    e.track(noise.id.clone(), Class::Extend, queued, s(0.0));
    let protected = |cmds: &[Command]| {
        cmds.iter()
            .filter_map(|c| match c {
                Command::Protect { bytes, .. } => Some(*bytes),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    let mut sent = Vec::new();
    for i in 0..=8 {
        sent.extend(protected(&tick(&mut e, &[&crit, &noise], f64::from(i)).1));
    }
    // Nine backends, each mapping the same 256 MiB of shared buffers.
    let backends: Vec<(u32, Vec<(u64, u64)>)> = (0..9)
        .map(|pid| (200 + pid, vec![(0, 256 * MIB)]))
        .collect();
    e.record_working_set(&crit.id, s(8.0), &backends);
    // The noise wakes: 64 MiB (plus room to grow) fits beside the 300 MiB
    // database in 1 GiB.
    noise.cpu += Duration::from_secs(1);
    let (tr, cmds) = tick(&mut e, &[&crit, &noise], 9.0);
    assert_eq!(tr[1], Some(Transition::Woke));
    sent.extend(protected(&cmds));
    assert!(
        !sent.is_empty() && sent.iter().all(|&b| b == 330 * MIB),
        "its 300 MiB and 10% headroom: {sent:?}"
    );
    assert!(
        !cmds
            .iter()
            .any(|c| matches!(c, Command::Freeze { frozen: true, .. })),
        "the waking context was kept waiting: {cmds:?}"
    );
}

#[path = "engine_admission_tests.rs"]
mod admission;

#[path = "engine_out_tests.rs"]
mod out;

#[path = "engine_reclaim_tests.rs"]
mod reclaim;

#[path = "engine_oom_tests.rs"]
mod oom;

#[path = "engine_refault_tests.rs"]
mod refault;

#[path = "engine_rest_tests.rs"]
mod rest;

#[path = "engine_cpu_tests.rs"]
mod cpu;

#[path = "engine_peak_tests.rs"]
mod peak;

#[path = "engine_predict_tests.rs"]
mod predict;

#[path = "engine_full_tests.rs"]
mod full;

#[path = "engine_guard_tests.rs"]
mod guard;

#[path = "engine_arrival_tests.rs"]
mod arrival;

#[path = "engine_wake_tests.rs"]
mod wake;

#[path = "engine_growth_tests.rs"]
mod growth;
