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
