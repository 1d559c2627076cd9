//! The CPU knobs of a tick: each class's CPU weight (a waking context's
//! for as long as it wakes), and the idle CPU group of a class that asks
//! for one (`cpu_idle`), which takes the place of its weights.

use super::*;

#[test]
fn each_context_runs_at_its_classs_cpu_weight_and_critical_ones_are_left_as_they_are() {
    let mut e = Engine::new(params());
    let db = Ctx::new("/db", 400);
    let noise = Ctx::new("/noise", 200);
    e.track(db.id.clone(), Class::Critical, class(16), s(0.0));
    let low = ClassParams {
        cpu_weight: Some(10),
        ..class(16)
    };
    e.track(noise.id.clone(), Class::Extend, low, s(0.0));
    // Written once, then not again (nothing read or written per tick) until
    // REASSERT has passed: then once more, which checks it is still memext's.
    let reassert = REASSERT.as_secs_f64();
    for (t, sent) in [
        (0.0, true),
        (1.0, false),
        (2.0, false),
        (reassert, true),
        (reassert + 1.0, false),
    ] {
        let (_, cmds) = tick(&mut e, &[&db, &noise], t);
        let weights: Vec<(&ContextId, u16)> = cmds
            .iter()
            .filter_map(|c| match c {
                Command::CpuWeight { id, weight } => Some((id, *weight)),
                _ => None,
            })
            .collect();
        let want = if sent { vec![(&noise.id, 10)] } else { vec![] };
        assert_eq!(weights, want, "at {t} s: {cmds:?}");
    }
}

#[test]
fn a_waking_extend_context_runs_at_the_default_cpu_weight_until_it_settles() {
    waking_weight(WAKE_CPU_WEIGHT);
}

#[test]
fn a_waking_extend_context_runs_at_its_classs_waking_weight() {
    waking_weight(20);
}

fn waking_weight(wake: u16) {
    let mut e = Engine::new(params());
    let low = ClassParams {
        cpu_weight: Some(1),
        wake_cpu_weight: wake,
        resident_cpu_weight: None,
        ..class(16)
    };
    let db = Ctx::new("/db", 400);
    let mut c = Ctx::new("/noise", 64);
    e.track(db.id.clone(), Class::Critical, class(16), s(0.0));
    e.track(c.id.clone(), Class::Extend, low, s(0.0));
    let weight = |cmds: &[Command]| {
        cmds.iter().find_map(|c| match c {
            Command::CpuWeight { weight, .. } => Some(*weight),
            _ => None,
        })
    };
    for i in 0..=6 {
        let (_, cmds) = tick(&mut e, &[&db, &c], f64::from(i));
        let want = (i == 0).then_some(1); // then unchanged: not sent again
        assert_eq!(weight(&cmds), want, "tick {i}");
    }
    c.cpu += Duration::from_secs(1);
    let (tr, cmds) = tick(&mut e, &[&db, &c], 7.0);
    assert_eq!(tr[1], Some(Transition::Woke));
    assert_eq!(weight(&cmds), Some(wake), "{cmds:?}");
    let mut sent = Vec::new();
    for i in 8..=10 {
        c.cpu += Duration::from_secs(1);
        let (_, cmds) = tick(&mut e, &[&db, &c], f64::from(i));
        sent.extend(weight(&cmds));
    }
    assert_eq!(e.get(&c.id).map(|t| t.model.state), Some(State::Active));
    assert_eq!(sent, vec![1], "settled: back to its class's weight, once");
}

/// A class with `cpu_idle` runs as an idle CPU group: `cpu.idle` asserted
/// like a weight (once, then again after REASSERT), and no weight written
/// for it, waking or not (the kernel refuses one for an idle group); the
/// critical context's knobs are left as they are.
#[test]
fn an_idle_cpu_class_gets_its_idle_group_and_no_cpu_weight() {
    let mut e = Engine::new(params());
    let db = Ctx::new("/db", 400);
    let mut noise = Ctx::new("/noise", 64);
    e.track(db.id.clone(), Class::Critical, class(16), s(0.0));
    let idle = ClassParams {
        cpu_weight: Some(10),
        cpu_idle: true,
        ..class(16)
    };
    e.track(noise.id.clone(), Class::Extend, idle, s(0.0));
    let cpu_knobs = |cmds: &[Command]| -> Vec<Command> {
        cmds.iter()
            .filter(|c| matches!(c, Command::CpuWeight { .. } | Command::CpuIdle { .. }))
            .cloned()
            .collect()
    };
    let set = vec![Command::CpuIdle {
        id: noise.id.clone(),
    }];
    let reassert = REASSERT.as_secs_f64();
    for (t, want) in [(0.0, set.clone()), (1.0, vec![]), (reassert, set.clone())] {
        let (_, cmds) = tick(&mut e, &[&db, &noise], t);
        assert_eq!(cpu_knobs(&cmds), want, "at {t} s: {cmds:?}");
    }
    // Idle, then woken: a waking context is not given the waking weight
    // (its knobs are asserted anew at a wake: `cpu.idle` with them).
    noise.cpu += Duration::from_secs(1);
    let (tr, cmds) = tick(&mut e, &[&db, &noise], reassert + 1.0);
    assert_eq!(tr[1], Some(Transition::Woke));
    assert_eq!(cpu_knobs(&cmds), set, "{cmds:?}");
}

/// The CPU weights among `cmds`, by context.
fn weights(cmds: &[Command]) -> Vec<(ContextId, u16)> {
    let mut w: Vec<_> = cmds
        .iter()
        .filter_map(|c| match c {
            Command::CpuWeight { id, weight } => Some((id.clone(), *weight)),
            _ => None,
        })
        .collect();
    w.sort();
    w
}

/// A class at weight 1, waking at 100, resident at 1000.
fn resident_at_1000() -> ClassParams {
    ClassParams {
        cpu_weight: Some(1),
        wake_cpu_weight: 100,
        resident_cpu_weight: Some(1000),
        ..class(16)
    }
}

/// A 64 MiB context with 48 MiB of it in swap.
fn with_pages_out(name: &str) -> Ctx {
    let mut c = Ctx::new(name, 64);
    c.swapped = 48 * MIB;
    c.usage = 16 * MIB;
    c
}

/// With `resident_cpu_weight`, a context whose memory is all in DRAM runs
/// at it (its next call is warm: served before the cold ones), one with
/// pages out at its class's weight, and a woken one at the waking weight.
#[test]
fn a_resident_context_runs_at_the_resident_weight_and_one_with_pages_out_does_not() {
    let mut e = Engine::new(params());
    let p = resident_at_1000();
    let db = Ctx::new("/db", 400);
    let mut warm = Ctx::new("/warm", 64);
    let mut cold = with_pages_out("/cold");
    e.track(db.id.clone(), Class::Critical, class(16), s(0.0));
    e.track(warm.id.clone(), Class::Extend, p.clone(), s(0.0));
    e.track(cold.id.clone(), Class::Extend, p, s(0.0));
    let (_, cmds) = tick(&mut e, &[&db, &warm, &cold], 0.0);
    assert_eq!(
        weights(&cmds),
        vec![(cold.id.clone(), 1), (warm.id.clone(), 1000)],
        "{cmds:?}"
    );
    // Its pages paged out (8 MiB or more in swap): no longer resident.
    warm.swapped = 40 * MIB;
    warm.usage = 24 * MIB;
    let (_, cmds) = tick(&mut e, &[&db, &warm, &cold], 1.0);
    assert_eq!(weights(&cmds), vec![(warm.id.clone(), 1)], "{cmds:?}");
    // The one with pages out wakes: a cold call, at the waking weight.
    for i in 2..=7 {
        tick(&mut e, &[&db, &warm, &cold], f64::from(i));
    }
    cold.cpu += Duration::from_secs(1);
    let (tr, cmds) = tick(&mut e, &[&db, &warm, &cold], 8.0);
    assert_eq!(tr[2], Some(Transition::Woke));
    assert!(weights(&cmds).contains(&(cold.id.clone(), 100)), "{cmds:?}");
}

/// Without a critical context an extend class's low weight only ranked its
/// own contexts against each other (a cold call at the waking weight
/// before the warm calls beside it at 1): they run at the kernel's
/// default, a woken one too; a resident weight above it still holds. Once
/// a critical context is tracked the class's weight is back.
#[test]
fn without_a_critical_context_extend_contexts_run_at_the_default_weight() {
    let mut e = Engine::new(params());
    let p = resident_at_1000();
    let cold = with_pages_out("/cold");
    let warm = Ctx::new("/warm", 64);
    e.track(cold.id.clone(), Class::Extend, p.clone(), s(0.0));
    e.track(warm.id.clone(), Class::Extend, p, s(0.0));
    let (_, cmds) = tick(&mut e, &[&cold, &warm], 0.0);
    assert_eq!(
        weights(&cmds),
        vec![(cold.id.clone(), WAKE_CPU_WEIGHT), (warm.id.clone(), 1000)],
        "{cmds:?}"
    );
    let db = Ctx::new("/db", 400);
    e.track(db.id.clone(), Class::Critical, class(16), s(1.0));
    let (_, cmds) = tick(&mut e, &[&cold, &warm, &db], 1.0);
    assert_eq!(weights(&cmds), vec![(cold.id.clone(), 1)], "{cmds:?}");
}

/// A tick says whether a critical context runs: the moves no wake waits
/// for yield it the CPU then (the daemon's `move_group`). It runs while it
/// takes CPU; not once it rests, nor where there is no critical context.
#[test]
fn a_decision_says_whether_a_critical_context_runs() {
    let mut e = Engine::new(params());
    let mut db = Ctx::new("/db", 400);
    let noise = Ctx::new("/noise", 64);
    e.track(noise.id.clone(), Class::Extend, class(16), s(0.0));
    let runs = |e: &mut Engine, ctxs: &[&Ctx], at: f64| {
        observe_all(e, ctxs, at);
        e.decide(s(at), &HOST, &never_busy).critical_runs
    };
    assert!(!runs(&mut e, &[&noise], 0.0), "no critical context");
    e.track(db.id.clone(), Class::Critical, class(16), s(1.0));
    let mut seen = Vec::new();
    for i in 1..=4 {
        db.cpu += Duration::from_secs(1);
        seen.push(runs(&mut e, &[&db, &noise], f64::from(i)));
    }
    assert_eq!(seen[1..], [true; 3], "busy: {seen:?}");
    let rested = (5..=60).map(|i| runs(&mut e, &[&db, &noise], f64::from(i)));
    assert_eq!(rested.last(), Some(false), "a minute without CPU");
}
