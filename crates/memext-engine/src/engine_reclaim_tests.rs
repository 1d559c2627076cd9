//! Limits below the usage lowered in the background (`Command::Reclaim`):
//! held at the usage at once, the rest reclaimed off the daemon's loop, its
//! room counted only when it is done.

use super::admission::limits_of;
use super::*;

/// v1 with a critical context, limits lowered in the background.
pub(super) const BG: HostFacts = HostFacts {
    limits_protect: true,
    background_reclaim: true,
    ..HOST
};

fn reclaims(cmds: &[Command]) -> Vec<(&str, u64, bool)> {
    cmds.iter()
        .filter_map(|c| match c {
            Command::Reclaim {
                id, bytes, urgent, ..
            } => Some((id.as_str(), *bytes, *urgent)),
            _ => None,
        })
        .collect()
}

/// Of each `Command::Reclaim`, whether its context rests.
fn resting(cmds: &[Command]) -> Vec<(&str, bool)> {
    cmds.iter()
        .filter_map(|c| match c {
            Command::Reclaim { id, resting, .. } => Some((id.as_str(), *resting)),
            _ => None,
        })
        .collect()
}

/// Of each `Command::Reclaim`, whether it yields to read-backs.
pub(super) fn yielding(cmds: &[Command]) -> Vec<(&str, bool)> {
    cmds.iter()
        .filter_map(|c| match c {
            Command::Reclaim { id, yields, .. } => Some((id.as_str(), *yields)),
            _ => None,
        })
        .collect()
}

/// Ticks with the database busy and `c` as it is; every command done.
pub(super) fn tick_v1(
    e: &mut Engine,
    db: &mut Ctx,
    c: &Ctx,
    at: f64,
    host: &HostFacts,
) -> Vec<Command> {
    db.cpu += Duration::from_millis(500);
    observe_all(e, &[&*db, c], at);
    let d = e.decide(s(at), host, &never_busy);
    for cmd in &d.commands {
        e.executed(cmd, Outcome::Done, s(at));
    }
    d.commands
}

/// A 300 MiB context that went idle beside a critical database and was
/// pushed out; what the mover could not page out (its swap cache, its page
/// cache) still holds 60 MiB, over its 16 MiB floor.
pub(super) fn pushed_out_beside_a_database(e: &mut Engine, db: &mut Ctx, host: &HostFacts) -> Ctx {
    let mut c = Ctx::new("/sleeper", 300);
    e.track(db.id.clone(), Class::Critical, class(16), s(0.0));
    e.track(c.id.clone(), Class::Extend, class(16), s(0.0));
    for i in 0..=7 {
        if i < 2 {
            c.cpu += Duration::from_millis(500);
        }
        let cmds = tick_v1(e, db, &c, f64::from(i), host);
        if !push_outs(&cmds).is_empty() {
            // Its limit follows the page-out, no lower than its usage.
            assert!(limits_of(&cmds, &c.id).iter().all(|&b| b >= c.usage));
            break;
        }
    }
    assert!(e.get(&c.id).is_some_and(|t| t.out), "pushed out");
    c.usage = 60 * MIB;
    c.swapped = 240 * MIB;
    c
}

#[test]
fn a_limit_below_the_usage_is_held_there_and_lowered_in_the_background() {
    let mut e = Engine::new(params());
    let mut db = Ctx::new("/db", 400);
    let mut c = pushed_out_beside_a_database(&mut e, &mut db, &BG);
    let cmds = tick_v1(&mut e, &mut db, &c, 8.0, &BG);
    // Held at its usage now (nothing reclaimed by that write), lowered to
    // its floor in the background, after the hold.
    let hold = cmds.iter().position(
        |x| matches!(x, Command::Limit { id, bytes } if *id == c.id && *bytes == 60 * MIB),
    );
    let bg = cmds
        .iter()
        .position(|x| matches!(x, Command::Reclaim { .. }));
    assert!(hold.is_some() && hold < bg, "{cmds:?}");
    assert_eq!(reclaims(&cmds), vec![("/sleeper", 16 * MIB, false)]);
    assert_eq!(resting(&cmds), vec![("/sleeper", true)], "it is idle");
    assert_eq!(
        yielding(&cmds),
        vec![("/sleeper", false)],
        "pushed out when idle: its room is not kept free for wakes"
    );
    assert!(
        limits_of(&cmds, &c.id).iter().all(|&b| b >= 60 * MIB),
        "nothing below its usage written in the loop: {cmds:?}"
    );
    // Its room is not free until the reclaimer says so: the limit in force
    // is the hold, and while it goes down nothing more is written for it.
    let t = e.get(&c.id).expect("tracked");
    assert_eq!(
        (t.limit_in_force(), t.reclaiming),
        (60 * MIB, Some(16 * MIB))
    );
    c.usage = 40 * MIB;
    let cmds = tick_v1(&mut e, &mut db, &c, 9.0, &BG);
    assert!(
        limits_of(&cmds, &c.id).is_empty() && reclaims(&cmds).is_empty(),
        "{cmds:?}"
    );
    e.reclaimed(&c.id, Some(16 * MIB), s(9.5));
    c.usage = 16 * MIB;
    let t = e.get(&c.id).expect("tracked");
    assert_eq!((t.limit_in_force(), t.reclaiming), (16 * MIB, None));
    let cmds = tick_v1(&mut e, &mut db, &c, 10.0, &BG);
    assert!(
        limits_of(&cmds, &c.id).is_empty() && reclaims(&cmds).is_empty(),
        "done: nothing to write again: {cmds:?}"
    );
}

/// On cgroup v1 the hard limit stands `charge_room` above the planned
/// limit. A context that uses that room (a function at rest touching a few
/// pages) is not lowered again: before, each tick it had touched a page of
/// it reclaimed it to its floor and gave the room back (bench/faas, session
/// 65: 243 such lowerings in a run, one of them as a call began, and the
/// function died of SIGSEGV).
#[test]
fn a_usage_within_the_charge_room_is_not_lowered_again() {
    let v1 = HostFacts {
        charge_room: MIB,
        ..BG
    };
    let mut e = Engine::new(params());
    let mut db = Ctx::new("/db", 400);
    let mut c = pushed_out_beside_a_database(&mut e, &mut db, &v1);
    tick_v1(&mut e, &mut db, &c, 8.0, &v1);
    e.reclaimed(&c.id, Some(16 * MIB), s(8.5));
    c.usage = 16 * MIB + MIB / 2;
    let cmds = tick_v1(&mut e, &mut db, &c, 9.0, &v1);
    assert!(reclaims(&cmds).is_empty(), "within its room: {cmds:?}");
    c.usage = 18 * MIB;
    let cmds = tick_v1(&mut e, &mut db, &c, 10.0, &v1);
    assert_eq!(
        reclaims(&cmds),
        vec![("/sleeper", 16 * MIB, false)],
        "beyond it"
    );
}

/// An idle context's usage is read rarely (`idle_read`): a lowering that
/// ended is what the engine knows of it until the next sample, not the
/// sample before the lowering, which stood above the new limit and had it
/// lowered again from its floor at every tick.
#[test]
fn a_lowering_that_ended_is_not_asked_again_from_the_sample_before_it() {
    let mut e = Engine::new(params());
    let mut db = Ctx::new("/db", 400);
    let c = pushed_out_beside_a_database(&mut e, &mut db, &BG);
    let cmds = tick_v1(&mut e, &mut db, &c, 8.0, &BG);
    assert_eq!(reclaims(&cmds), vec![("/sleeper", 16 * MIB, false)]);
    e.reclaimed(&c.id, Some(16 * MIB), s(8.5));
    for at in [9.0, 10.0] {
        // Only the database is read: the sleeper's last sample says 60 MiB.
        db.cpu += Duration::from_millis(500);
        observe_all(&mut e, &[&db], at);
        let d = e.decide(s(at), &BG, &never_busy);
        assert!(
            reclaims(&d.commands).is_empty(),
            "at {at}: {:?}",
            d.commands
        );
        for cmd in &d.commands {
            e.executed(cmd, Outcome::Done, s(at));
        }
    }
}

/// A context squeezed to its floor while it runs is lowered in the
/// background too, marked not resting: its pages in use are left to the
/// kernel's reclaim at the limit (coldest first), not paged out by address.
#[test]
fn a_running_context_squeezed_below_its_usage_is_lowered_as_not_resting() {
    let squeezed = HostFacts {
        capacity: 456 * MIB, // the database's 400 and 10%, and one floor
        ..BG
    };
    let mut e = Engine::new(params());
    let mut db = Ctx::new("/db", 400);
    let mut c = Ctx::new("/runner", 300);
    e.track(db.id.clone(), Class::Critical, class(16), s(0.0));
    e.track(c.id.clone(), Class::Extend, class(16), s(0.0));
    let mut marks = Vec::new();
    for i in 0..12 {
        c.cpu += Duration::from_millis(500);
        let cmds = tick_v1(&mut e, &mut db, &c, f64::from(i), &squeezed);
        if e.get(&c.id).is_some_and(|t| t.squeezed) {
            // Paged out for room as it runs; what is left (its swap cache)
            // is over its floor, within what a push-out leaves to the limit.
            (c.usage, c.swapped) = (22 * MIB, 278 * MIB);
        }
        marks.extend(resting(&cmds).into_iter().map(|(_, r)| r));
    }
    assert_eq!(
        e.get(&c.id).map(|t| t.model.state),
        Some(State::Active),
        "it runs"
    );
    assert!(
        !marks.is_empty() && marks.iter().all(|r| !r),
        "lowered in the background, not resting: {marks:?}"
    );
}

/// Its wake raises the limit (that write stops the lowering); a lowering
/// that stopped reports the limit it left, which a later write overrides.
#[test]
fn a_wake_raises_a_limit_on_its_way_down() {
    let mut e = Engine::new(params());
    let mut db = Ctx::new("/db", 400);
    let mut c = pushed_out_beside_a_database(&mut e, &mut db, &BG);
    tick_v1(&mut e, &mut db, &c, 8.0, &BG);
    assert!(e
        .poll(&c.id, s(8.2), c.cpu + Duration::from_millis(20))
        .is_some());
    c.cpu += Duration::from_millis(20);
    let cmds = e.serve_wake(&c.id, s(8.2), &BG, &never_busy);
    assert!(
        limits_of(&cmds, &c.id).iter().any(|&b| b >= 300 * MIB),
        "{cmds:?}"
    );
    for cmd in &cmds {
        e.executed(cmd, Outcome::Done, s(8.2));
    }
    let t = e.get(&c.id).expect("tracked");
    assert_eq!(t.reclaiming, None);
    let raised = t.limit;
    e.reclaimed(&c.id, Some(32 * MIB), s(8.3));
    assert_eq!(
        e.get(&c.id).and_then(|t| t.limit),
        raised,
        "the raise stands"
    );
}

/// While a critical context is under pressure it needs the room now: the
/// limit is written in the loop at once, as without a reclaimer.
#[test]
fn under_critical_pressure_the_limit_is_written_at_once() {
    let mut e = Engine::new(params());
    let mut db = Ctx::new("/db", 400);
    let c = pushed_out_beside_a_database(&mut e, &mut db, &BG);
    db.psi = Some(PRESSURE_PSI * 4.0);
    let cmds = tick_v1(&mut e, &mut db, &c, 8.0, &BG);
    assert!(reclaims(&cmds).is_empty(), "{cmds:?}");
    assert_eq!(limits_of(&cmds, &c.id), vec![16 * MIB]);
}

/// Without a reclaimer (`daemon.reclaim = "loop"`) a lowered limit is
/// written as before.
#[test]
fn without_a_reclaimer_the_limit_is_written_in_the_loop() {
    let v1 = HostFacts {
        background_reclaim: false,
        ..BG
    };
    let mut e = Engine::new(params());
    let mut db = Ctx::new("/db", 400);
    let c = pushed_out_beside_a_database(&mut e, &mut db, &v1);
    let cmds = tick_v1(&mut e, &mut db, &c, 8.0, &v1);
    assert!(reclaims(&cmds).is_empty(), "{cmds:?}");
    assert_eq!(limits_of(&cmds, &c.id), vec![16 * MIB]);
}

/// A wake that waits for room hurries the lowering on its way that will
/// free it: the lowering is asked again, urgent.
#[test]
fn a_wake_waiting_for_room_hurries_a_lowering_on_its_way() {
    let tight = HostFacts {
        capacity: 780 * MIB,
        ..BG
    };
    let mut e = Engine::new(params());
    let mut db = Ctx::new("/db", 400);
    let mut sleeper = Ctx::new("/sleeper", 300);
    let mut waker = Ctx::new("/waker", 300);
    e.track(db.id.clone(), Class::Critical, class(16), s(0.0));
    for c in [&sleeper, &waker] {
        e.track(c.id.clone(), Class::Extend, class(16), s(0.0));
    }
    let mut at = 0.0;
    while !(e.get(&sleeper.id).is_some_and(|t| t.out) && e.get(&waker.id).is_some_and(|t| t.out)) {
        assert!(at < 20.0, "both pushed out");
        if at < 2.0 {
            sleeper.cpu += Duration::from_millis(500);
            waker.cpu += Duration::from_millis(500);
        }
        db.cpu += Duration::from_millis(500);
        observe_all(&mut e, &[&db, &sleeper, &waker], at);
        let d = e.decide(s(at), &tight, &never_busy);
        for cmd in &d.commands {
            e.executed(cmd, Outcome::Done, s(at));
            // Each lowering in the background done within the tick, as
            // the reclaimer reports it (a squeezed one's, before it idles).
            if let Command::Reclaim { id, bytes, .. } = cmd {
                e.reclaimed(id, Some(*bytes), s(at + 0.5));
            }
        }
        at += 1.0;
    }
    // The sleeper's leftovers go down in the background; the waker's pages
    // are all out.
    (sleeper.usage, sleeper.swapped) = (60 * MIB, 240 * MIB);
    (waker.usage, waker.swapped) = (16 * MIB, 284 * MIB);
    for x in [&db, &sleeper, &waker] {
        e.observe(&x.id, x.sample(at), false);
    }
    let d = e.decide(s(at), &tight, &never_busy);
    assert_eq!(reclaims(&d.commands), vec![("/sleeper", 16 * MIB, false)]);
    for cmd in &d.commands {
        e.executed(cmd, Outcome::Done, s(at));
    }
    assert!(e
        .poll(
            &waker.id,
            s(at + 0.2),
            waker.cpu + Duration::from_millis(20)
        )
        .is_some());
    let cmds = e.serve_wake(&waker.id, s(at + 0.2), &tight, &never_busy);
    assert!(
        bring_backs(&cmds).is_empty(),
        "its room is not free yet: {cmds:?}"
    );
    assert_eq!(
        reclaims(&cmds),
        vec![("/sleeper", 16 * MIB, true)],
        "{cmds:?}"
    );
}
