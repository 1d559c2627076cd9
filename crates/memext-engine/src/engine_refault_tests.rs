//! What a context refaults after memext took memory from it is not a call
//! (`refault`): measured, an idle function's event loop refaulted 70 pages
//! with 1-2 ms of CPU after its limit was lowered, and the engine recorded an
//! onset for it, a call that never came.

use super::*;

/// A function on a host meant to be full: busy at 0-1 s, quiet (between
/// calls) from 3 s on, sampled at every whole second up to `until`.
fn resting_function(e: &mut Engine, until: f64) -> Ctx {
    resting_function_idle_after(e, until, 60)
}

fn resting_function_idle_after(e: &mut Engine, until: f64, idle_after: u64) -> Ctx {
    let mut f = Ctx::new("/func", 60);
    let p = ClassParams {
        push_out: PushOutWhen::Needed,
        idle_after: Duration::from_secs(idle_after),
        ..class(4)
    };
    e.track(f.id.clone(), Class::Extend, p, s(0.0));
    let mut at = 0.0;
    while at <= until {
        if at < 2.0 {
            f.cpu += Duration::from_millis(300);
        }
        e.observe(&f.id, f.sample(at), false);
        at += 1.0;
    }
    assert!(e.get(&f.id).is_some_and(|t| t.is_quiet(s(until))));
    f
}

/// Its event loop wakes after `at`'s lowering: 70 pages back from the tier.
fn housekeeping(f: &mut Ctx) {
    f.majflt += 70;
    f.cpu += Duration::from_millis(1);
}

fn lower(e: &mut Engine, f: &Ctx, at: f64) {
    let cmd = Command::Limit {
        id: f.id.clone(),
        bytes: 4 * MIB,
    };
    e.executed(&cmd, Outcome::Done, s(at));
}

/// A resting function (`resting_function` up to 4 s), its limit lowered at
/// 4 s if `took`.
fn rested(took: bool) -> (Engine, Ctx) {
    let mut e = Engine::new(params());
    let f = resting_function(&mut e, 4.0);
    if took {
        lower(&mut e, &f, 4.0);
    }
    (e, f)
}

#[test]
fn the_refaults_after_a_lowered_limit_are_no_onset_a_call_is() {
    for took in [false, true] {
        let (mut e, mut f) = rested(took);
        housekeeping(&mut f);
        let o = e.observe(&f.id, f.sample(5.0), false);
        let want = (!took).then_some(Transition::Onset);
        assert_eq!(o.transition, want, "memory taken: {took}");
        if took {
            // A call within the same window touches its heap: seen at once.
            f.majflt += 9000;
            f.cpu += Duration::from_millis(60);
            let o = e.observe(&f.id, f.sample(5.5), false);
            assert_eq!(o.transition, Some(Transition::Onset));
        }
    }
}

#[test]
fn a_polled_refault_is_no_onset() {
    for took in [false, true] {
        let (mut e, mut f) = rested(took);
        assert_eq!(e.poll(&f.id, s(4.1), f.cpu), None);
        // 9 ms of CPU in 400 ms is above the activity share (2%).
        f.cpu += Duration::from_millis(9);
        let want = (!took).then_some(Transition::Onset);
        assert_eq!(e.poll(&f.id, s(4.4), f.cpu), want, "memory taken: {took}");
    }
}

/// A lowering in the background keeps the window open until it is done,
/// and its last steps open one more; then the context's faults are its own.
#[test]
fn a_lowering_in_the_background_keeps_its_refaults_memexts_until_done() {
    let mut e = Engine::new(params());
    let mut f = resting_function(&mut e, 4.0);
    let cmd = Command::Reclaim {
        id: f.id.clone(),
        bytes: 4 * MIB,
        urgent: false,
        resting: true,
        yields: true,
    };
    e.executed(&cmd, Outcome::Done, s(4.0));
    for at in [5.0, 6.0, 7.0] {
        housekeeping(&mut f);
        let o = e.observe(&f.id, f.sample(at), false);
        assert_eq!(o.transition, None, "still lowering at {at}");
    }
    e.reclaimed(&f.id, Some(4 * MIB), s(7.5));
    housekeeping(&mut f);
    assert_eq!(e.observe(&f.id, f.sample(8.0), false).transition, None);
    assert_eq!(e.observe(&f.id, f.sample(10.0), false).transition, None);
    housekeeping(&mut f);
    let o = e.observe(&f.id, f.sample(10.5), false);
    assert_eq!(o.transition, Some(Transition::Onset), "its own, long after");
}

/// A lowering to above what the context holds (its limit trimmed, none of
/// its pages taken) opens no window, in flight or ended: a call's CPU after
/// it is its own. One below it does.
#[test]
fn a_lowering_that_takes_nothing_leaves_its_cpu_its_own() {
    for ended in [false, true] {
        for (bytes, own) in [(100 * MIB, true), (4 * MIB, false)] {
            let mut e = Engine::new(params());
            let mut f = resting_function(&mut e, 4.0);
            let cmd = Command::Reclaim {
                id: f.id.clone(),
                bytes,
                urgent: false,
                resting: true,
                yields: true,
            };
            e.executed(&cmd, Outcome::Done, s(4.0));
            if ended {
                e.reclaimed(&f.id, Some(bytes), s(4.05));
            }
            assert_eq!(e.poll(&f.id, s(4.1), f.cpu), None);
            // 9 ms of CPU in 300 ms is above the activity share (2%).
            f.cpu += Duration::from_millis(9);
            let want = own.then_some(Transition::Onset);
            let got = e.poll(&f.id, s(4.4), f.cpu);
            assert_eq!(got, want, "lowered to {bytes} B, ended: {ended}");
        }
    }
}

/// Its first faults 10 ms into a call, at the 4 MiB limit memext left it,
/// fire its usage event: 40 faults, 2 ms of CPU, too little to judge by.
fn first_faults_of_a_call(f: &mut Ctx) {
    f.majflt += 40;
    f.cpu += Duration::from_millis(2);
}

/// The kernel's event is the activity: a call seen at its first faults,
/// not taken for the moment the function went idle (measured: 58 calls of
/// a bench/faas run, the wake seen only at the next tick, p50 156 ms).
#[test]
fn a_fired_event_is_an_onset_not_an_idle() {
    let mut e = Engine::new(params());
    let mut f = resting_function_idle_after(&mut e, 5.0, 5);
    lower(&mut e, &f, 3.0);
    assert_eq!(e.get(&f.id).map(|t| t.model.state), Some(State::Active));
    first_faults_of_a_call(&mut f);
    let o = e.observe_fired(&f.id, f.sample(6.5), false);
    assert_eq!(o.transition, Some(Transition::Onset));
    // The same reading at a tick is not enough to call it a call.
    let mut e = Engine::new(params());
    let mut f = resting_function_idle_after(&mut e, 5.0, 5);
    lower(&mut e, &f, 3.0);
    first_faults_of_a_call(&mut f);
    let o = e.observe(&f.id, f.sample(6.5), false);
    assert_eq!(o.transition, Some(Transition::BecameIdle));
}

/// An event while memext moves its pages, after it read some back, or just
/// after it took some, is judged on the counters (credited as ever), and is
/// never the idle moment.
#[test]
fn a_fired_event_memext_caused_is_judged_on_the_counters() {
    for cause in ["moving", "read back", "took"] {
        let mut e = Engine::new(params());
        let mut f = resting_function_idle_after(&mut e, 5.0, 5);
        lower(&mut e, &f, if cause == "took" { 6.4 } else { 3.0 });
        if cause == "read back" {
            let back = Command::BringBack(BringBack {
                id: f.id.clone(),
                pids: vec![100],
                order: Vec::new(),
                bandwidth: 0,
                reason: PrefetchReason::Refill,
                map_back: false,
                map_kept: false,
                from_the_end: false,
            });
            e.executed(&back, Outcome::Done, s(6.3));
        }
        first_faults_of_a_call(&mut f);
        let o = e.observe_fired(&f.id, f.sample(6.5), cause == "moving");
        assert_eq!(o.transition, None, "{cause}");
        assert_eq!(e.get(&f.id).map(|t| t.model.state), Some(State::Active));
    }
}
