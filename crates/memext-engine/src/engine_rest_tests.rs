//! A resident context's warm call is seen against its own rest (`rest`):
//! measured, bench/faas' handler with its heap in used 0.22-0.30 ms of CPU
//! a second at rest and 1.1-1.6 ms for a call, no fault; a fifth of a run's
//! calls went unseen, and the timers' periods with them. It is remembered
//! in the history and nothing else: the context rests on, needing no room.

use super::*;

/// Microseconds of the measured handler's rest, second by second.
const REST_US: [u64; 5] = [222, 231, 239, 295, 227];

/// A function idle from 5 s on (busy at 0-1 s), resting with the
/// measured handler's CPU and sampled every second up to `until`;
/// `swapped` MiB of it in swap.
fn rested_function(e: &mut Engine, until: u32, swapped: u64, push_out: PushOutWhen) -> Ctx {
    let mut f = Ctx::new("/func", 60);
    f.swapped = swapped * MIB;
    let p = ClassParams {
        push_out,
        ..class(4)
    };
    e.track(f.id.clone(), Class::Extend, p, s(0.0));
    for k in 0..=until {
        f.cpu += if k < 2 {
            Duration::from_millis(300)
        } else {
            Duration::from_micros(REST_US[k as usize % 5])
        };
        e.observe(&f.id, f.sample(f64::from(k)), false);
    }
    f
}

/// A warm call (1.2 ms of CPU, no fault) with its second's rest.
fn warm_call(f: &mut Ctx) {
    f.cpu += Duration::from_micros(1200 + 230);
}

#[test]
fn a_resident_idle_contexts_warm_call_is_remembered_at_the_tick() {
    for (swapped, want) in [(0, Some(Transition::WarmCall)), (40, None)] {
        let mut e = Engine::new(params());
        let mut f = rested_function(&mut e, 30, swapped, PushOutWhen::Idle);
        assert_eq!(e.get(&f.id).map(|t| t.model.state), Some(State::Idle));
        warm_call(&mut f);
        let o = e.observe(&f.id, f.sample(31.0), false);
        assert_eq!(o.transition, want, "{swapped} MiB in swap");
        let t = e.get(&f.id).expect("tracked");
        assert_eq!(t.model.state, State::Idle, "it rests on");
        let calls = usize::from(want.is_some());
        assert_eq!(t.model.history.count(), calls, "{swapped} MiB in swap");
        // Seen by its CPU alone (`ActivationHistory::record_by_cpu`).
        assert_eq!(t.model.history.count_by_cpu(), calls);
    }
}

/// The daemon's tick reads a guarded idle context's CPU only (`poll`); so
/// do its polls between ticks.
#[test]
fn a_resident_idle_contexts_warm_call_is_remembered_at_a_poll() {
    let mut e = Engine::new(params());
    let mut f = rested_function(&mut e, 30, 0, PushOutWhen::Idle);
    assert_eq!(e.poll(&f.id, s(30.3), f.cpu), None, "its rest");
    f.cpu += Duration::from_micros(1300);
    assert_eq!(e.poll(&f.id, s(30.32), f.cpu), Some(Transition::WarmCall));
    // Once: the next poll judges from the call on.
    assert_eq!(e.poll(&f.id, s(30.34), f.cpu), None);
    // A call that does more than a warm one is a wake as before.
    f.cpu += Duration::from_millis(30);
    assert_eq!(e.poll(&f.id, s(30.6), f.cpu), Some(Transition::Woke));
}

/// Its rest not learned yet (`rest::LEARNED`: 5 s; it rests from 2 s), the
/// call is not told from it; once learned, it is.
#[test]
fn a_warm_call_is_not_judged_before_the_rest_is_learned() {
    for (until, want) in [(4, None), (8, Some(Transition::WarmCall))] {
        let mut e = Engine::new(params());
        let mut f = rested_function(&mut e, until, 0, PushOutWhen::Idle);
        warm_call(&mut f);
        let at = f64::from(until + 1);
        assert_eq!(
            e.observe(&f.id, f.sample(at), false).transition,
            want,
            "{until} s"
        );
    }
}

/// On a host meant to be full, a function between calls stays active and
/// quiet: its warm calls are in its history, and it stays quiet.
#[test]
fn a_quiet_functions_warm_calls_are_remembered() {
    let mut e = Engine::new(params());
    let p = ClassParams {
        idle_after: Duration::from_secs(60),
        ..class(4)
    };
    let mut f = Ctx::new("/func", 60);
    e.track(f.id.clone(), Class::Extend, p, s(0.0));
    let mut wakes = 0;
    for k in 0..=60u32 {
        let busy = k < 2 || (k >= 20 && k % 15 == 5);
        if busy && k > 2 {
            warm_call(&mut f);
        } else {
            f.cpu += Duration::from_micros(REST_US[k as usize % 5]);
        }
        if k < 2 {
            f.cpu += Duration::from_millis(300);
        }
        let o = e.observe(&f.id, f.sample(f64::from(k)), false);
        if o.transition == Some(Transition::WarmCall) {
            wakes += 1;
        }
    }
    assert_eq!(wakes, 3, "the calls at 20, 35 and 50 s");
    let t = e.get(&f.id).expect("tracked");
    assert!(t.is_quiet(s(60.0)));
    assert_eq!(t.model.history.count(), 3);
}

/// Paged out at its floor, a function's housekeeping refaults on its own
/// CPU (up to 37 ms a second in a bench/faas run); that is not its rest.
/// Brought back, its warm call is judged against the rest it has with its
/// pages in, not against the busiest second it had out.
#[test]
fn the_rest_is_learned_with_the_pages_in() {
    let mut e = Engine::new(params());
    let mut f = rested_function(&mut e, 5, 40, PushOutWhen::Idle);
    for k in 6..=60u32 {
        f.cpu += Duration::from_millis(if k % 3 == 0 { 20 } else { 2 });
        e.observe(&f.id, f.sample(f64::from(k)), false);
    }
    f.swapped = 0; // brought back
    for k in 61..=75u32 {
        f.cpu += Duration::from_micros(REST_US[k as usize % 5]);
        e.observe(&f.id, f.sample(f64::from(k)), false);
    }
    warm_call(&mut f);
    let o = e.observe(&f.id, f.sample(76.0), false);
    assert_eq!(o.transition, Some(Transition::WarmCall));
}

/// Polls between ticks learn no rest while the pages are out either: a
/// minute of a paged-out function's housekeeping (4 ms a second, too
/// little to be a wake) leaves its rest unlearned.
#[test]
fn polls_learn_no_rest_while_the_pages_are_out() {
    let mut e = Engine::new(params());
    let mut f = rested_function(&mut e, 5, 40, PushOutWhen::Idle);
    for k in 1..=240u32 {
        f.cpu += Duration::from_millis(1);
        let at = s(5.0 + 0.25 * f64::from(k));
        assert_eq!(e.poll(&f.id, at, f.cpu), None, "poll {k}");
    }
    let t = e.get(&f.id).expect("tracked");
    assert_eq!(t.model.rest_allowance(Duration::from_secs(1)), None);
}

/// On a host meant to be full, a function rested at its floor has its pages
/// in swap (the kernel put them there at its lowered limit, not memext's
/// push-out), and at its floor it gives no push-out as it turns idle. Woken
/// at the next tick, seen there only (not watched: idle, not out), its pages
/// in swap come back at that tick as an onset's do. (bench/faas, session 55:
/// fn0099's burst of nine calls ran against its 4 MiB floor, each call
/// faulting 12.6k pages back in 76-94 ms of its CPU.)
#[test]
fn a_rested_function_woken_at_a_tick_after_it_turned_idle_is_brought_back() {
    let mut e = Engine::new(params());
    let p = ClassParams {
        push_out: PushOutWhen::Needed,
        ..class(4)
    };
    let mut f = Ctx::new("/func", 4);
    f.swapped = 40 * MIB;
    e.track(f.id.clone(), Class::Extend, p, s(0.0));
    let mut idle_at = None;
    for k in 0..=20u32 {
        f.cpu += if k < 2 {
            Duration::from_millis(300)
        } else {
            Duration::from_micros(REST_US[k as usize % 5])
        };
        let (seen, _) = tick(&mut e, &[&f], f64::from(k));
        if seen[0] == Some(Transition::BecameIdle) {
            idle_at = Some(k);
            break;
        }
    }
    let idle_at = idle_at.expect("it turns idle");
    let t = e.get(&f.id).expect("tracked");
    assert!(!t.out, "at its floor, nothing to push out");
    f.cpu += Duration::from_millis(30);
    f.majflt += 1600;
    let (seen, commands) = tick(&mut e, &[&f], f64::from(idle_at + 1));
    assert_eq!(seen[0], Some(Transition::Woke));
    assert!(
        commands
            .iter()
            .any(|c| matches!(c, Command::BringBack(b) if b.id == f.id)),
        "{commands:?}"
    );
}
