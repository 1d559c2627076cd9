//! The margins and slack the plan keeps, learned from each context's own
//! growth (`growth`): while it runs and while it rests.

use super::*;

/// A running context's margin in the plan is learned from its own growth
/// (`growth`): a function that does not grow gets the smallest one once
/// read for 20 s; a read-back charging it (its usage up by what came in)
/// is no growth.
#[test]
fn a_running_contexts_margin_follows_its_own_growth() {
    let mut e = Engine::new(params());
    let mut f = Ctx::new("/func", 60);
    e.track(f.id.clone(), Class::Extend, class(4), s(0.0));
    let margin = |e: &Engine, at: f64| {
        let input = e.plan_input(s(at), 1024 * MIB);
        input.contexts[0].growth
    };
    for k in 0..=19u32 {
        f.cpu += Duration::from_millis(300);
        e.observe(&f.id, f.sample(f64::from(k)), false);
    }
    assert_eq!(
        margin(&e, 19.0),
        crate::planner::GROWTH_BYTES,
        "not learned yet"
    );
    f.cpu += Duration::from_millis(300);
    e.observe(&f.id, f.sample(20.0), false);
    assert_eq!(margin(&e, 20.0), crate::growth::MIN_MARGIN);
    // Its pages moving: 40 MiB more charged is not growth.
    f.usage += 40 * MIB;
    e.observe(&f.id, f.sample(21.0), true);
    e.observe(&f.id, f.sample(22.0), false);
    assert_eq!(margin(&e, 22.0), crate::growth::MIN_MARGIN);
    // Its own: it is.
    f.usage += 10 * MIB;
    e.observe(&f.id, f.sample(23.0), false);
    assert_eq!(margin(&e, 23.0), 20 * MIB);
}

/// A resting context's slack in the plan is learned from its own growth
/// while it rests (`growth`): its growth while it ran does not count, 20 s
/// of rest without growth give the smallest slack, a call's first
/// allocations at rest raise it.
#[test]
fn a_resting_contexts_slack_follows_its_own_growth_at_rest() {
    let mut e = Engine::new(params());
    let mut f = Ctx::new("/func", 60);
    e.track(f.id.clone(), Class::Extend, class(4), s(0.0));
    let slack = |e: &Engine, at: f64| e.plan_input(s(at), 1024 * MIB).contexts[0].rest_slack;
    // Running 10 s, 5 MiB more each second: not rest.
    for k in 0..10u32 {
        f.cpu += Duration::from_millis(300);
        f.usage += 5 * MIB;
        e.observe(&f.id, f.sample(f64::from(k)), false);
    }
    // Idle after 5 s without CPU, then 20 s at rest without growth.
    for k in 10..=35u32 {
        e.observe(&f.id, f.sample(f64::from(k)), false);
    }
    assert_eq!(e.get(&f.id).map(|t| t.model.state), Some(State::Idle));
    assert_eq!(slack(&e, 35.0), crate::growth::MIN_REST_SLACK);
    // 384 KiB of its own at rest: twice that.
    f.usage += 384 << 10;
    e.observe(&f.id, f.sample(36.0), false);
    assert_eq!(slack(&e, 36.0), 768 << 10);
}
