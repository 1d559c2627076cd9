//! Predicted wakes: a periodic context brought back ahead of its call,
//! mapped back, and held resident until it comes.

use super::*;

#[test]
fn a_periodic_context_is_brought_back_before_its_wake_mapped_and_held() {
    let mut e = Engine::new(params());
    let mut c = Ctx::new("/cron", 128);
    e.track(c.id.clone(), Class::Extend, class(16), s(0.0));
    let mut predicted = None;
    every_15_s(&mut e, &mut c, |e, c, t, cmds| {
        if let Some(b) = bring_backs(cmds).first() {
            if b.reason == PrefetchReason::Periodic && predicted.is_none() {
                predicted = Some((t, (*b).clone()));
            }
        }
        c.swapped = if e.get(&c.id).is_some_and(|t| t.out) {
            100 * MIB
        } else {
            0
        };
    });
    let (at, b) = predicted.expect("a periodic bring-back");
    assert!(b.map_back, "a predicted wake is mapped back");
    // Predicted from the third wake on, 3 s ahead.
    let next_wake = next_call_after(at);
    assert!(
        (next_wake - at - 3.0).abs() <= 0.5,
        "brought back at {at}, wake {next_wake}"
    );
}

#[test]
fn a_held_context_is_not_pushed_out_before_its_predicted_wake() {
    let mut e = Engine::new(params());
    let mut c = Ctx::new("/held", 128);
    e.track(c.id.clone(), Class::Extend, class(16), s(0.0));
    for i in 0..=6 {
        tick(&mut e, &[&c], f64::from(i));
    }
    // (For a wake predicted to follow another's: a hold for a periodic
    // wake ends sooner once its history has none due, and this one has no
    // schedule.)
    let b = BringBack {
        id: c.id.clone(),
        reason: PrefetchReason::FollowsLeader,
        pids: vec![100],
        order: vec![],
        bandwidth: 0,
        map_back: true,
        map_kept: false,
        from_the_end: false,
    };
    e.executed(&Command::BringBack(b), Outcome::Done, s(7.0));
    assert_eq!(
        e.get(&c.id).and_then(|t| t.held),
        Some((s(13.0), PrefetchReason::FollowsLeader))
    );
    // Some pages are still in swap (the read-back missed them): the plan
    // keeps the hold, but it is in already, so nothing is read back again.
    c.swapped = 8 * MIB;
    for i in 8..13 {
        let (_, cmds) = tick(&mut e, &[&c], f64::from(i));
        assert!(
            push_outs(&cmds).is_empty(),
            "pushed out while held at {i}: {cmds:?}"
        );
        assert!(
            bring_backs(&cmds).is_empty(),
            "brought back again at {i}: {cmds:?}"
        );
    }
    assert_eq!(e.watched(), vec![c.id.clone()], "a held context is watched");
    let (_, cmds) = tick(&mut e, &[&c], 14.0);
    assert_eq!(push_outs(&cmds).len(), 1, "the hold expired");
}

/// The first periodic bring-back of a context called every 15 s (at 10,
/// 25, 40, ...), with or without a critical context tracked beside it.
fn first_periodic_bring_back(with_critical: bool) -> Option<f64> {
    let mut e = Engine::new(params());
    let mut c = Ctx::new("/cron", 128);
    let db = Ctx::new("/db", 256);
    e.track(c.id.clone(), Class::Extend, class(16), s(0.0));
    if with_critical {
        e.track(db.id.clone(), Class::Critical, class(0), s(0.0));
    }
    let mut t = 0.0;
    while t <= 70.0 {
        if t >= 10.0 && (t - 10.0) % 15.0 < 1.0 {
            c.cpu += Duration::from_millis(250);
        }
        let ctxs: Vec<&Ctx> = if with_critical {
            vec![&c, &db]
        } else {
            vec![&c]
        };
        let (_, cmds) = tick(&mut e, &ctxs, t);
        if bring_backs(&cmds)
            .iter()
            .any(|b| b.id == c.id && b.reason == PrefetchReason::Periodic)
        {
            return Some(t);
        }
        c.swapped = if e.get(&c.id).is_some_and(|t| t.out) {
            100 * MIB
        } else {
            0
        };
        t += 0.5;
    }
    None
}

/// Two calls make a guessed period: the third is read back ahead of it,
/// unless a critical context is tracked (a read-back for nothing would take
/// its CPU): then from the fourth, on a period of two intervals.
#[test]
fn a_guessed_period_is_acted_on_only_without_a_critical_context() {
    let alone = first_periodic_bring_back(false).expect("a periodic bring-back");
    assert_eq!(next_call_after(alone), 40.0, "brought back at {alone}");
    let beside = first_periodic_bring_back(true).expect("a periodic bring-back");
    assert_eq!(next_call_after(beside), 55.0, "brought back at {beside}");
}
