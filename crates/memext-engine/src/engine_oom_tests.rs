//! A context paused in the kernel's OOM wait (`Engine::out_of_memory`):
//! served as a wake where it rests, and its limit always raised past where
//! it waits, whatever room the plan has.

use super::admission::limits_of;
use super::reclaim::{pushed_out_beside_a_database, tick_v1, BG};
use super::*;
use crate::engine::{oom_raise, OOM_STEP};

/// An extend context that runs (CPU at every tick), its limit written at
/// `limit_mib` as a lowering that stopped there would leave it.
fn running_at(e: &mut Engine, c: &mut Ctx, limit_mib: u64) {
    e.track(c.id.clone(), Class::Extend, class(16), s(0.0));
    for i in 0..3 {
        c.cpu += Duration::from_millis(500);
        observe_all(e, &[&*c], f64::from(i));
    }
    let cmd = Command::Limit {
        id: c.id.clone(),
        bytes: limit_mib * MIB,
    };
    e.executed(&cmd, Outcome::Done, s(2.5));
    c.usage = limit_mib * MIB;
}

/// fn0091 of bench/faas (session 24): a call came while a lowering of its
/// limit stopped at 22 MiB, and waited there. Running, it has no wake to
/// serve; its limit goes up at once, past where it waits.
#[test]
fn a_running_context_waiting_at_its_limit_is_raised_past_it() {
    let mut e = Engine::new(params());
    let mut c = Ctx::new("/fn", 50);
    running_at(&mut e, &mut c, 22);
    let (tr, cmds) = e.out_of_memory(&c.id, s(2.6), None, &HOST, &never_busy);
    assert_eq!(tr, None, "it runs: no transition");
    let raised = limits_of(&cmds, &c.id);
    assert_eq!(raised.len(), 1, "{cmds:?}");
    assert!(raised[0] >= 22 * MIB + OOM_STEP, "{cmds:?}");
    for cmd in &cmds {
        e.executed(cmd, Outcome::Done, s(2.6));
    }
    // A second wait, at the raised limit, raises it again.
    let (_, again) = e.out_of_memory(&c.id, s(2.8), None, &HOST, &never_busy);
    assert!(
        limits_of(&again, &c.id)
            .iter()
            .all(|&b| b >= oom_raise(raised[0])),
        "{again:?}"
    );
    assert!(!limits_of(&again, &c.id).is_empty(), "{again:?}");
}

/// Frozen (waiting for admission), it has no transition either; the raise
/// is still written, for when it runs.
#[test]
fn a_frozen_context_waiting_at_its_limit_is_raised_too() {
    let mut e = Engine::new(params());
    let mut c = Ctx::new("/fn", 50);
    running_at(&mut e, &mut c, 22);
    let freeze = Command::Freeze {
        id: c.id.clone(),
        frozen: true,
    };
    e.executed(&freeze, Outcome::Done, s(2.5));
    let (tr, cmds) = e.out_of_memory(&c.id, s(2.6), None, &HOST, &never_busy);
    assert_eq!(tr, None);
    assert!(
        limits_of(&cmds, &c.id)
            .iter()
            .any(|&b| b >= 22 * MIB + OOM_STEP),
        "{cmds:?}"
    );
}

/// Pushed out beside a critical database on a cap with little room left,
/// its wake (seen only as the OOM wait: no CPU) is a wake, in its history.
/// The room the critical context leaves would raise it to 24 MiB, less than
/// a step past where it waits; the raise goes past it anyway.
#[test]
fn a_pushed_out_context_waiting_at_its_floor_wakes_and_goes_past_it_beyond_the_room() {
    let full = HostFacts {
        capacity: 464 * MIB, // the database's 400 and 10%, and 24 MiB
        ..BG
    };
    let mut e = Engine::new(params());
    let mut db = Ctx::new("/db", 400);
    let mut c = Ctx::new("/sleeper", 300);
    e.track(db.id.clone(), Class::Critical, class(16), s(0.0));
    e.track(c.id.clone(), Class::Extend, class(16), s(0.0));
    for i in 0..12 {
        if i < 2 {
            c.cpu += Duration::from_millis(500);
        }
        tick_v1(&mut e, &mut db, &c, f64::from(i), &full);
        e.reclaimed(&c.id, Some(16 * MIB), s(f64::from(i) + 0.5));
    }
    let t = e.get(&c.id).expect("tracked");
    assert!(t.out && t.limit_in_force() <= 16 * MIB, "pushed out: {t:?}");
    (c.usage, c.swapped) = (16 * MIB, 284 * MIB);
    let (tr, cmds) = e.out_of_memory(&c.id, s(12.5), None, &full, &never_busy);
    assert_eq!(tr, Some(Transition::Woke));
    let raise = cmds.iter().position(
        |x| matches!(x, Command::Limit { id, bytes } if *id == c.id && *bytes >= oom_raise(16 * MIB)),
    );
    let back = cmds
        .iter()
        .position(|x| matches!(x, Command::BringBack(b) if b.id == c.id));
    assert!(raise.is_some(), "{cmds:?}");
    assert!(
        back.is_none_or(|b| raise < Some(b)),
        "raised first: {cmds:?}"
    );
    assert_eq!(
        e.get(&c.id).map(|t| t.model.history.count()),
        Some(1),
        "the wake is in its history"
    );
}

/// The sample the daemon reads on the event may itself find the wake (the
/// charge is activity); that wake is served with the raise: its pages are
/// brought back, not only its limit raised.
#[test]
fn a_wake_the_fresh_sample_found_is_served_with_the_raise() {
    let mut e = Engine::new(params());
    let mut db = Ctx::new("/db", 400);
    let mut c = pushed_out_beside_a_database(&mut e, &mut db, &BG);
    tick_v1(&mut e, &mut db, &c, 8.0, &BG);
    e.reclaimed(&c.id, Some(16 * MIB), s(8.5));
    c.majflt += 40;
    c.cpu += Duration::from_millis(2);
    let sampled = e.observe_fired(&c.id, c.sample(20.0), false).transition;
    assert_eq!(sampled, Some(Transition::Woke));
    let (tr, cmds) = e.out_of_memory(&c.id, s(20.0), sampled, &BG, &never_busy);
    assert_eq!(tr, None, "the sample's wake, not a second one");
    assert!(
        cmds.iter()
            .any(|x| matches!(x, Command::BringBack(b) if b.id == c.id)),
        "{cmds:?}"
    );
    assert!(
        limits_of(&cmds, &c.id)
            .iter()
            .any(|&b| b >= oom_raise(16 * MIB)),
        "{cmds:?}"
    );
}

/// Waiting at a limit memext never wrote (the container's own), it is not
/// memext's to raise.
#[test]
fn a_limit_memext_did_not_write_is_left_alone() {
    let mut e = Engine::new(params());
    let mut c = Ctx::new("/own-limit", 50);
    e.track(c.id.clone(), Class::Extend, class(16), s(0.0));
    for i in 0..3 {
        c.cpu += Duration::from_millis(500);
        observe_all(&mut e, &[&c], f64::from(i));
    }
    let (_, cmds) = e.out_of_memory(&c.id, s(2.6), None, &HOST, &never_busy);
    assert!(limits_of(&cmds, &c.id).is_empty(), "{cmds:?}");
}
