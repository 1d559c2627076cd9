//! Admission on simulated traces: contexts that wake together and do not
//! fit are let in one after another, the rest frozen.

use super::*;

/// An extend class under admission control.
fn queued() -> ClassParams {
    ClassParams {
        admit_within: Duration::from_secs(10),
        ..class(16)
    }
}

pub(super) fn freezes(cmds: &[Command]) -> Vec<(&str, bool)> {
    cmds.iter()
        .filter_map(|c| match c {
            Command::Freeze { id, frozen } => Some((id.as_str(), *frozen)),
            _ => None,
        })
        .collect()
}

#[test]
fn contexts_waking_in_a_burst_are_admitted_one_after_another_the_rest_frozen() {
    let mut e = Engine::new(params());
    // All four wake in the same tick: 4 x 332 MiB do not fit in 1 GiB.
    let mut cs = pushed_out_then_woken(&mut e, "n", 4, &queued());
    let refs: Vec<&Ctx> = cs.iter().collect();
    let (tr, cmds) = tick(&mut e, &refs, 8.0);
    assert!(tr.iter().all(|t| *t == Some(Transition::Woke)), "{tr:?}");
    assert_eq!(freezes(&cmds), vec![("/n3", true)], "{cmds:?}");
    assert!(matches!(cmds[0], Command::Freeze { .. }), "frozen first");
    let back: Vec<&str> = bring_backs(&cmds).iter().map(|b| b.id.as_str()).collect();
    assert_eq!(back, vec!["/n0", "/n1", "/n2"]);
    assert!(cs[..3]
        .iter()
        .all(|c| e.get(&c.id).is_some_and(|t| t.target == 332 * MIB)));
    // The admitted ones run; the frozen one shows no CPU, and does not
    // settle while it waits.
    for c in &mut cs[..3] {
        c.cpu += Duration::from_millis(500);
    }
    let refs: Vec<&Ctx> = cs.iter().collect();
    let (_, cmds) = tick(&mut e, &refs, 9.0);
    assert!(freezes(&cmds).is_empty(), "{cmds:?}");
    // At 10 s the first three have settled: the fourth is admitted, its
    // limit raised and its working set queued for reading before it thaws.
    let (_, cmds) = tick(&mut e, &refs, 10.0);
    assert_eq!(freezes(&cmds), vec![("/n3", false)], "{cmds:?}");
    let pos = |f: &dyn Fn(&Command) -> bool| cmds.iter().position(f).expect("command");
    let raise = pos(
        &|c| matches!(c, Command::Limit { id, bytes } if id.as_str() == "/n3" && *bytes == 332 * MIB),
    );
    let read = pos(&|c| matches!(c, Command::BringBack(b) if b.id.as_str() == "/n3"));
    let thaw = pos(&|c| matches!(c, Command::Freeze { frozen: false, .. }));
    assert!(raise < read && read < thaw, "{cmds:?}");
    let t = e.get(&cs[3].id).expect("tracked");
    assert_eq!((t.model.state, t.model.since), (State::Waking, s(10.0)));
    assert!(!t.frozen && t.waiting_since.is_none());
}

#[test]
fn a_wake_seen_between_ticks_waits_frozen_when_it_does_not_fit() {
    let mut e = Engine::new(params());
    let mut big = Ctx::new("/big", 700);
    let mut late = Ctx::new("/late", 400);
    big.cpu += Duration::from_secs(1);
    e.track(big.id.clone(), Class::Extend, queued(), s(0.0));
    e.track(late.id.clone(), Class::Extend, queued(), s(0.0));
    for i in 0..=6 {
        if i < 6 {
            big.cpu += Duration::from_millis(500);
        }
        tick(&mut e, &[&big, &late], f64::from(i));
    }
    // `late` is idle and pushed out; `big` has just gone idle too, but wakes
    // first, between ticks, and is admitted at once.
    late.usage = 16 * MIB;
    late.swapped = 384 * MIB;
    tick(&mut e, &[&big, &late], 7.0);
    tick(&mut e, &[&big, &late], 8.0);
    tick(&mut e, &[&big, &late], 12.0);
    assert!(e.get(&big.id).is_some_and(|t| t.out), "pushed out");
    big.usage = 16 * MIB;
    big.swapped = 684 * MIB;
    tick(&mut e, &[&big, &late], 12.005);
    // (Just pushed out: above what its refaults would cost, `refault`.)
    assert!(e
        .poll(&big.id, s(12.01), big.cpu + Duration::from_millis(30))
        .is_some());
    let cmds = e.serve_wake(&big.id, s(12.01), &HOST, &never_busy);
    assert!(
        freezes(&cmds).is_empty() && bring_backs(&cmds).len() == 1,
        "{cmds:?}"
    );
    for c in &cmds {
        e.executed(c, Outcome::Done, s(12.01));
    }
    e.observe(&big.id, big.sample(12.5), false);
    e.decide(s(12.5), &HOST, &never_busy);
    // `late` wakes too: 732 + 432 MiB do not fit in 1 GiB.
    assert!(e.poll(&late.id, s(12.58), late.cpu).is_none());
    assert!(e
        .poll(&late.id, s(12.6), late.cpu + Duration::from_millis(10))
        .is_some());
    let cmds = e.serve_wake(&late.id, s(12.6), &HOST, &never_busy);
    assert_eq!(freezes(&cmds), vec![("/late", true)]);
    assert!(bring_backs(&cmds).is_empty());
}

#[test]
fn a_context_that_cannot_be_frozen_runs_as_without_admission() {
    let mut e = Engine::new(params());
    let cs = pushed_out_then_woken(&mut e, "f", 4, &queued());
    let refs: Vec<&Ctx> = cs.iter().collect();
    for c in &refs {
        e.observe(&c.id, c.sample(8.0), false);
    }
    let d = e.decide(s(8.0), &HOST, &never_busy);
    let freeze = d
        .commands
        .iter()
        .find(|c| matches!(c, Command::Freeze { .. }))
        .expect("a freeze");
    e.executed(freeze, Outcome::Failed, s(8.0));
    let t = e.get(freeze.id()).expect("tracked");
    assert!(!t.frozen && t.waiting_since.is_none());
    let d = e.decide(s(8.5), &HOST, &never_busy);
    assert!(freezes(&d.commands).is_empty(), "{:?}", d.commands);
}

/// The limits `cmds` write for `id`.
pub(super) fn limits_of(cmds: &[Command], id: &ContextId) -> Vec<u64> {
    cmds.iter()
        .filter_map(|c| match c {
            Command::Limit { id: i, bytes } if i == id => Some(*bytes),
            _ => None,
        })
        .collect()
}

/// Replays `cmds` in order over the limits memext last wrote, and asserts
/// that the extend contexts' limits never sum past `room` at any point.
fn assert_limits_within(e: &Engine, cmds: &[Command], extend: &[&Ctx], room: u64) {
    let mut limits: Vec<(ContextId, u64)> = extend
        .iter()
        .map(|c| {
            (
                c.id.clone(),
                e.get(&c.id).map_or(c.usage, |t| t.limit_in_force()),
            )
        })
        .collect();
    for cmd in cmds {
        if let Command::Limit { id, bytes } = cmd {
            if let Some(l) = limits.iter_mut().find(|(k, _)| k == id) {
                l.1 = *bytes;
            }
        }
        let sum: u64 = limits.iter().map(|(_, b)| b).sum();
        assert!(
            sum <= room,
            "extend limits at {} MiB past the {} MiB left at {cmd:?}: {cmds:?}",
            sum / MIB,
            room / MIB
        );
    }
}

/// A 400 MiB critical database, a 300 MiB batch job and a 300 MiB sleeper
/// (of class `sleeper`) on a 1 GiB host.
fn db_batch_sleeper(sleeper: ClassParams) -> (Engine, Ctx, Ctx, Ctx) {
    let mut e = Engine::new(params());
    let db = Ctx::new("/db", 400);
    // (Named so that the plan lists the wake first: it still comes second.)
    let batch = Ctx::new("/worker", 300);
    let sleeping = Ctx::new("/sleeper", 300);
    e.track(db.id.clone(), Class::Critical, class(16), s(0.0));
    e.track(batch.id.clone(), Class::Extend, class(16), s(0.0));
    e.track(sleeping.id.clone(), Class::Extend, sleeper, s(0.0));
    (e, db, batch, sleeping)
}

/// On cgroup v1 the extend contexts' limits are a critical context's only
/// protection: at no point of a tick's writes, nor of a wake served between
/// ticks, do they sum past the room it leaves. A wake is given room only as
/// the others' limits come down; its read-back waits for its room.
#[test]
fn extend_limits_never_sum_past_the_room_a_critical_context_leaves() {
    let v1 = HostFacts {
        limits_protect: true,
        ..HOST
    };
    let (mut e, mut db, mut batch, mut sleeper) = db_batch_sleeper(class(16));
    let room =
        |e: &Engine, db: &Ctx| HOST.capacity - e.get(&db.id).map_or(0, |t| t.target.max(db.usage));
    let step = |e: &mut Engine, cs: [&mut Ctx; 3], at: f64| {
        cs[0].cpu += Duration::from_millis(500);
        cs[1].cpu += Duration::from_millis(500);
        observe_all(e, &[&*cs[0], &*cs[1], &*cs[2]], at);
        let d = e.decide(s(at), &v1, &never_busy);
        // A context pushed out is paged out first: its limit is not written
        // below its usage in the same batch (the kernel would reclaim it in
        // the daemon's loop, or fail where its swappiness is 0).
        for p in push_outs(&d.commands) {
            let usage = cs.iter().find(|c| c.id == p.id).map_or(0, |c| c.usage);
            assert!(
                limits_of(&d.commands, &p.id).iter().all(|&b| b >= usage),
                "{:?}",
                d.commands
            );
        }
        if at > 0.0 {
            // (Before its first writes, the limits are not memext's.)
            assert_limits_within(e, &d.commands, &[&*cs[1], &*cs[2]], room(e, &*cs[0]));
        }
        for c in &d.commands {
            e.executed(c, Outcome::Done, s(at));
        }
    };
    for i in 0..=7 {
        step(&mut e, [&mut db, &mut batch, &mut sleeper], f64::from(i));
    }
    assert!(e.get(&sleeper.id).is_some_and(|t| t.out), "pushed out");
    sleeper.usage = 16 * MIB;
    sleeper.swapped = 284 * MIB;
    step(&mut e, [&mut db, &mut batch, &mut sleeper], 8.0);
    // It wakes between ticks: the batch job's limit (all the room the
    // database leaves but the sleeper's floor) comes down first.
    assert!(e
        .poll(&sleeper.id, s(8.2), sleeper.cpu + Duration::from_millis(20))
        .is_some());
    let cmds = e.serve_wake(&sleeper.id, s(8.2), &v1, &never_busy);
    assert_limits_within(&e, &cmds, &[&batch, &sleeper], room(&e, &db));
    let raised = cmds.iter().any(
        |c| matches!(c, Command::Limit { id, bytes } if *id == sleeper.id && *bytes >= 300 * MIB),
    );
    assert!(raised && bring_backs(&cmds).len() == 1, "{cmds:?}");
}

/// A v1 host without a critical context, 640 MiB: a busy 300 MiB worker,
/// and a 300 MiB sleeper gone idle and pushed out (16 MiB left, the rest
/// in swap) after 8 ticks.
fn worker_and_pushed_out_sleeper(v1: &HostFacts) -> (Engine, Ctx, Ctx) {
    let mut e = Engine::new(params());
    let mut worker = Ctx::new("/worker", 300);
    let mut sleeper = Ctx::new("/sleeper", 300);
    e.track(worker.id.clone(), Class::Extend, class(16), s(0.0));
    e.track(sleeper.id.clone(), Class::Extend, class(16), s(0.0));
    for i in 0..=8 {
        let at = f64::from(i);
        worker.cpu += Duration::from_millis(500);
        if i == 8 {
            sleeper.usage = 16 * MIB;
            sleeper.swapped = 284 * MIB;
        }
        observe_all(&mut e, &[&worker, &sleeper], at);
        let d = e.decide(s(at), v1, &never_busy);
        for c in &d.commands {
            e.executed(c, Outcome::Done, s(at));
        }
    }
    assert!(e.get(&sleeper.id).is_some_and(|t| t.out), "pushed out");
    (e, worker, sleeper)
}

/// Without a critical context, a wake served between ticks lowers the
/// others' limits for its room only in the background: from usages a tick
/// old, a limit written in the daemon's loop reclaimed there (a bench/faas
/// function read back since that tick was squeezed back to its old usage
/// while its call ran). Without a reclaimer it lowers none (the tick does).
#[test]
fn without_a_critical_context_a_wake_between_ticks_lowers_others_only_in_the_background() {
    for background in [false, true] {
        let v1 = HostFacts {
            limits_protect: true,
            background_reclaim: background,
            capacity: 640 * MIB,
            ..HOST
        };
        let (mut e, worker, sleeper) = worker_and_pushed_out_sleeper(&v1);
        let before = e.get(&worker.id).map(ContextState::limit_in_force);
        assert!(e
            .poll(&sleeper.id, s(8.2), sleeper.cpu + Duration::from_millis(20))
            .is_some());
        let cmds = e.serve_wake(&sleeper.id, s(8.2), &v1, &never_busy);
        let written: Vec<u64> = limits_of(&cmds, &worker.id);
        assert!(
            written.iter().all(|&b| Some(b) >= before),
            "no lowering written between ticks: {cmds:?}"
        );
        let lowered = cmds
            .iter()
            .any(|c| matches!(c, Command::Reclaim { id, .. } if *id == worker.id));
        assert_eq!(lowered, background, "{cmds:?}");
        assert_eq!(bring_backs(&cmds).len(), 1, "{cmds:?}");
    }
}

/// A context brought back since its last sample is planned with all it
/// has (its sample is from before the read-back), not squeezed toward what
/// it held before. A sample after the read-back ends it.
#[test]
fn a_context_read_back_since_its_last_sample_is_planned_with_all_it_has() {
    let v1 = HostFacts {
        limits_protect: true,
        background_reclaim: true,
        capacity: 640 * MIB,
        ..HOST
    };
    let (mut e, mut worker, mut sleeper) = worker_and_pushed_out_sleeper(&v1);
    // It wakes at a tick: brought back, and all it has in its limit.
    sleeper.cpu += Duration::from_millis(500);
    worker.cpu += Duration::from_millis(500);
    for c in [&worker, &sleeper] {
        e.observe(&c.id, c.sample(9.0), false);
    }
    let d = e.decide(s(9.0), &v1, &never_busy);
    assert_eq!(bring_backs(&d.commands).len(), 1, "{:?}", d.commands);
    for c in &d.commands {
        e.executed(c, Outcome::Done, s(9.0));
    }
    assert!(e.get(&sleeper.id).is_some_and(|t| t.reading_back));
    // A plan before its next sample (a wake served between ticks) counts
    // what it had in swap as in: not 16 MiB, which it held before.
    let input = e.plan_input(s(9.3), v1.capacity);
    let c = input.contexts.iter().find(|c| c.key == sleeper.id);
    assert_eq!(c.map(|c| (c.usage, c.swapped)), Some((300 * MIB, 0)));
    // Read back: a sample after it ends the estimate.
    (sleeper.usage, sleeper.swapped) = (300 * MIB, 0);
    e.observe(&sleeper.id, sleeper.sample(10.0), false);
    assert!(e.get(&sleeper.id).is_some_and(|t| !t.reading_back));
}

/// Where the others' limits come down in the background, a wake whose
/// raise must wait for their room waits frozen instead of faulting its
/// pages in against its floor meanwhile; once the room is made it is
/// raised, read back, and then thawed.
#[test]
fn a_wake_whose_raise_waits_for_room_waits_frozen_until_the_room_is_made() {
    let v1 = HostFacts {
        limits_protect: true,
        background_reclaim: true,
        ..HOST
    };
    let (mut e, mut db, mut batch, mut sleeper) = db_batch_sleeper(queued());
    // The reclaimer ends each lowering as soon as it is handed one.
    let run = |e: &mut Engine, cmds: &[Command], at: f64| {
        for c in cmds {
            e.executed(c, Outcome::Done, s(at));
            if let Command::Reclaim { id, bytes, .. } = c {
                e.reclaimed(id, Some(*bytes), s(at));
            }
        }
    };
    for i in 0..=8 {
        let at = f64::from(i);
        db.cpu += Duration::from_millis(500);
        batch.cpu += Duration::from_millis(500);
        if i == 8 {
            sleeper.usage = 16 * MIB;
            sleeper.swapped = 284 * MIB;
        }
        observe_all(&mut e, &[&db, &batch, &sleeper], at);
        let d = e.decide(s(at), &v1, &never_busy);
        run(&mut e, &d.commands, at);
    }
    assert!(e.get(&sleeper.id).is_some_and(|t| t.out), "pushed out");
    // It wakes between ticks; the plan admits it (the batch job's room is
    // its), but the batch's limit comes down in the background: no room yet.
    assert!(e
        .poll(&sleeper.id, s(8.2), sleeper.cpu + Duration::from_millis(20))
        .is_some());
    let cmds = e.serve_wake(&sleeper.id, s(8.2), &v1, &never_busy);
    assert!(
        e.get(&sleeper.id)
            .is_some_and(|t| t.waiting_since.is_none()),
        "admitted"
    );
    assert_eq!(freezes(&cmds), vec![("/sleeper", true)], "{cmds:?}");
    assert!(
        matches!(cmds[0], Command::Freeze { .. }),
        "frozen first: {cmds:?}"
    );
    assert!(bring_backs(&cmds).is_empty(), "{cmds:?}");
    let lowering = cmds.iter().find_map(|c| match c {
        Command::Reclaim {
            id, bytes, urgent, ..
        } if *id == batch.id => Some((*bytes, *urgent)),
        _ => None,
    });
    let (to, urgent) = lowering.expect("the batch's room asked for");
    assert!(urgent, "{cmds:?}");
    for c in &cmds {
        e.executed(c, Outcome::Done, s(8.2));
    }
    // A tick while the lowering goes on: still frozen, not thawed.
    db.cpu += Duration::from_millis(500);
    batch.cpu += Duration::from_millis(500);
    for c in [&db, &batch, &sleeper] {
        e.observe(&c.id, c.sample(9.0), false);
    }
    let d = e.decide(s(9.0), &v1, &never_busy);
    assert!(freezes(&d.commands).is_empty(), "{:?}", d.commands);
    assert!(e.get(&sleeper.id).is_some_and(|t| t.frozen));
    // The batch's lowering ends: at the next tick it is raised, read back, thawed.
    e.reclaimed(&batch.id, Some(to), s(9.5));
    batch.usage = to;
    for c in [&db, &batch, &sleeper] {
        e.observe(&c.id, c.sample(10.0), false);
    }
    let d = e.decide(s(10.0), &v1, &never_busy);
    let cmds = &d.commands;
    assert_eq!(freezes(cmds), vec![("/sleeper", false)], "{cmds:?}");
    let pos = |f: &dyn Fn(&Command) -> bool| cmds.iter().position(f).expect("command");
    let raise = pos(
        &|c| matches!(c, Command::Limit { id, bytes } if id.as_str() == "/sleeper" && *bytes >= 300 * MIB),
    );
    let read = pos(&|c| matches!(c, Command::BringBack(b) if b.id.as_str() == "/sleeper"));
    let thaw = pos(&|c| matches!(c, Command::Freeze { frozen: false, .. }));
    assert!(raise < read && read < thaw, "{cmds:?}");
}

/// Two noise contexts pushed out and woken together beside a 200 MiB
/// database, both with room to run; the database active throughout when
/// `db_runs`, else quiet from the start. The freezes of the tick that sees
/// the wakes.
fn two_wakes_beside_a_database(p: &ClassParams, db_runs: bool) -> Vec<(String, bool)> {
    let mut e = Engine::new(params());
    let mut db = Ctx::new("/db", 200);
    e.track(db.id.clone(), Class::Critical, class(16), s(0.0));
    let mut cs: Vec<Ctx> = (0..2).map(|i| Ctx::new(&format!("/n{i}"), 300)).collect();
    for c in &cs {
        e.track(c.id.clone(), Class::Extend, p.clone(), s(0.0));
    }
    let step = |e: &mut Engine, cs: &[Ctx], db: &mut Ctx, at: f64| {
        if db_runs {
            db.cpu += Duration::from_millis(500);
        }
        let mut refs: Vec<&Ctx> = vec![db];
        refs.extend(cs);
        tick(e, &refs, at).1
    };
    for i in 0..=7 {
        step(&mut e, &cs, &mut db, f64::from(i));
    }
    assert!(cs.iter().all(|c| e.get(&c.id).is_some_and(|t| t.out)));
    for c in &mut cs {
        c.usage = 16 * MIB;
        c.swapped = 284 * MIB;
        c.cpu += Duration::from_secs(1);
    }
    let cmds = step(&mut e, &cs, &mut db, 8.0);
    freezes(&cmds)
        .into_iter()
        .map(|(id, f)| (id.to_string(), f))
        .collect()
}

#[test]
fn where_one_wake_is_served_at_once_the_second_of_two_that_fit_waits_while_a_critical_context_runs()
{
    let one = ClassParams {
        wakes_at_once: Some(1),
        cpu_idle: false,
        ..queued()
    };
    assert_eq!(
        two_wakes_beside_a_database(&one, true),
        vec![("/n1".to_string(), true)]
    );
    // Nothing to protect: both run.
    assert!(two_wakes_beside_a_database(&one, false).is_empty());
    // No limit: both fit, both run.
    assert!(two_wakes_beside_a_database(&queued(), true).is_empty());
}
