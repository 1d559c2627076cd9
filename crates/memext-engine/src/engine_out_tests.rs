//! `fast_wakes`: contexts that are out without memext's mover having moved
//! them (the kernel paged them out at the limit memext wrote), and onsets
//! served as wakes.

use super::*;

/// An extend class whose wakes are served as fast as the machine allows,
/// at a tenth of the default CPU weight otherwise.
fn fast() -> ClassParams {
    ClassParams {
        fast_wakes: true,
        cpu_weight: Some(10),
        ..class(16)
    }
}

/// A small context (53 MiB) that ran at its 16 MiB floor limit: the kernel
/// put 37 MiB of it in swap; it goes idle with nothing for the mover to do.
fn paged_out_by_its_limit(e: &mut Engine, p: ClassParams) -> Ctx {
    let mut c = Ctx::new("/noise", 16);
    c.swapped = 37 * MIB;
    e.track(c.id.clone(), Class::Extend, p, s(0.0));
    for i in 0..=8 {
        if i < 2 {
            c.cpu += Duration::from_millis(500);
        }
        let (_, cmds) = tick(e, &[&c], f64::from(i));
        assert!(push_outs(&cmds).is_empty(), "nothing to push out: {cmds:?}");
    }
    assert_eq!(e.get(&c.id).map(|t| t.model.state), Some(State::Idle));
    c
}

#[test]
fn a_context_its_limit_paged_out_is_watched_between_ticks_and_read_back_when_it_wakes() {
    let mut e = Engine::new(params());
    let mut c = paged_out_by_its_limit(&mut e, fast());
    // Out all the same: its wake is watched for between ticks (not left to
    // the next tick's reading of a CPU time it hardly gets), at the waking
    // weight (idle, it takes none).
    assert_eq!(e.watched(), vec![c.id.clone()]);
    let weight = e.get(&c.id).and_then(|t| t.cpu_weight(s(9.0), true));
    assert_eq!(weight, Some(WAKE_CPU_WEIGHT));
    let polls = poll_twice(&mut e, &mut c, (9.5, 9.52), 10);
    assert_eq!(polls, (None, Some(Transition::Woke)), "a wake");
    let cmds = e.serve_wake(&c.id, s(9.52), &HOST, &never_busy);
    assert!(limits(&cmds).iter().any(|&b| b >= 53 * MIB), "{cmds:?}");
    assert_eq!(bring_backs(&cmds).len(), 1, "read back in bulk: {cmds:?}");
}

#[test]
fn without_fast_wakes_a_context_its_limit_paged_out_is_left_to_fault_back() {
    let mut e = Engine::new(params());
    let c = paged_out_by_its_limit(
        &mut e,
        ClassParams {
            fast_wakes: false,
            ..fast()
        },
    );
    assert!(e.watched().is_empty(), "seen at a tick");
    let weight = e.get(&c.id).and_then(|t| t.cpu_weight(s(9.0), true));
    assert_eq!(weight, Some(10));
}

#[test]
fn a_wake_seen_at_a_tick_gets_room_for_all_its_limit_paged_out() {
    let mut e = Engine::new(params());
    let mut c = paged_out_by_its_limit(&mut e, fast());
    c.cpu += Duration::from_millis(500);
    let (tr, cmds) = tick(&mut e, &[&c], 9.0);
    assert_eq!(tr, vec![Some(Transition::Woke)]);
    // It touches all it has: its limit makes room for the 37 MiB in swap
    // too, not only for the 16 MiB its working set was recorded at.
    assert!(limits(&cmds).iter().any(|&b| b >= 53 * MIB), "{cmds:?}");
    assert_eq!(bring_backs(&cmds).len(), 1, "{cmds:?}");
}

/// An onset is a wake until it settles: its read-back is not pushed out
/// again for the next context that wakes while it still touches its pages,
/// and it runs at the waking CPU weight meanwhile.
#[test]
fn an_onset_keeps_its_room_and_the_waking_weight_until_it_settles() {
    let mut e = Engine::new(params());
    let db = Ctx::new("/db", 700);
    let mut a = Ctx::new("/a", 16);
    a.swapped = 100 * MIB;
    let mut b = Ctx::new("/b", 200);
    e.track(db.id.clone(), Class::Critical, class(16), s(0.0));
    e.track(a.id.clone(), Class::Extend, fast(), s(0.0));
    e.track(b.id.clone(), Class::Extend, fast(), s(0.0));
    for i in 0..=7 {
        if i <= 4 {
            a.cpu += Duration::from_millis(500);
        }
        tick(&mut e, &[&db, &a, &b], f64::from(i));
    }
    assert!(e.get(&b.id).is_some_and(|t| t.out), "b pushed out");
    b.usage = 16 * MIB;
    b.swapped = 184 * MIB;
    // a, active and quiet since 4 s, starts again at 8 s: its onset reads
    // back its 100 MiB.
    a.cpu += Duration::from_millis(500);
    let (tr, cmds) = tick(&mut e, &[&db, &a, &b], 8.0);
    assert_eq!(tr[1], Some(Transition::Onset));
    assert_eq!(bring_backs(&cmds).len(), 1, "{cmds:?}");
    a.usage = 116 * MIB;
    a.swapped = 0;
    // b wakes at 9 s, while a still touches its pages: both do not fit.
    a.cpu += Duration::from_millis(500);
    b.cpu += Duration::from_millis(500);
    let (tr, cmds) = tick(&mut e, &[&db, &a, &b], 9.0);
    assert_eq!(tr[2], Some(Transition::Woke));
    assert!(
        push_outs(&cmds).iter().all(|p| p.id != a.id),
        "a pushed out while it settles: {cmds:?}"
    );
    let weight = e.get(&a.id).and_then(|t| t.cpu_weight(s(9.0), true));
    assert_eq!(weight, Some(WAKE_CPU_WEIGHT));
    // Settled (2 s after its onset), it is an active context again.
    let weight = e.get(&a.id).and_then(|t| t.cpu_weight(s(10.5), true));
    assert_eq!(weight, Some(10));
}

/// A function of `usage_mib` on a host meant to be full (`when-needed`),
/// busy in its first second (ticks at 0 and 1 s).
fn busy_on_a_full_host(e: &mut Engine, usage_mib: u64) -> Ctx {
    let mut f = Ctx::new("/func", usage_mib);
    let full = full_host();
    e.track(f.id.clone(), Class::Extend, full, s(0.0));
    f.cpu = Duration::from_millis(300);
    tick(e, &[&f], 0.0);
    f.cpu += Duration::from_millis(300);
    tick(e, &[&f], 1.0);
    f
}

/// On a host meant to be full, a function paged out for room while it
/// rested between calls (active, quiet) is watched like an idle one: its
/// next call is an onset seen between ticks and served at once (its limit
/// raised to all it has, its pages read back in bulk), not at the next
/// tick while it faults them in one by one. Busy, it is not polled.
#[test]
fn an_active_context_paged_out_as_it_rested_is_watched_and_its_onset_served_between_ticks() {
    let mut e = Engine::new(params());
    let mut f = busy_on_a_full_host(&mut e, 20);
    assert!(e.watched().is_empty(), "nothing out");
    let busy = f.cpu + Duration::from_millis(50);
    assert_eq!(e.poll(&f.id, s(1.5), busy), None, "busy: the tick's");
    f.swapped = 53 * MIB;
    for at in [2.0, 3.0, 4.0] {
        tick(&mut e, &[&f], at);
    }
    assert_eq!(e.get(&f.id).map(|t| t.model.state), Some(State::Active));
    assert_eq!(e.watched(), vec![f.id.clone()]);
    let polls = poll_twice(&mut e, &mut f, (4.5, 4.52), 10);
    assert_eq!(
        polls,
        (None, Some(Transition::Onset)),
        "quiet, then its call"
    );
    let t = e.get(&f.id).expect("tracked");
    assert_eq!(t.model.history.last(), Some(s(4.52)), "recorded");
    assert_eq!(t.waiting_since, None, "an onset is not queued");
    let cmds = e.serve_wake(&f.id, s(4.52), &HOST, &never_busy);
    assert!(limits(&cmds).iter().any(|&b| b >= 73 * MIB), "{cmds:?}");
    assert_eq!(bring_backs(&cmds).len(), 1, "read back in bulk: {cmds:?}");
}

/// On a host meant to be full, a context paged out for room as it rested
/// that then goes idle is out: watched between ticks, and read back when
/// it wakes, also at a tick (left squeezed, most functions' wakes in a
/// bench/faas run were seen only at a tick, and nothing was read back).
#[test]
fn a_context_paged_out_as_it_rested_that_goes_idle_is_out() {
    let mut e = Engine::new(params());
    let mut f = busy_on_a_full_host(&mut e, 60);
    // Paged out for room as it rested (what `executed` notes of a push-out
    // done while it is active).
    e.contexts.get_mut(&f.id).expect("tracked").squeezed = true;
    (f.usage, f.swapped) = (16 * MIB, 44 * MIB);
    let mut at = 2.0;
    while e.get(&f.id).map(|t| t.model.state) == Some(State::Active) {
        tick(&mut e, &[&f], at);
        at += 1.0;
        assert!(at < 60.0, "never idle");
    }
    let t = e.get(&f.id).expect("tracked");
    assert!(t.out && !t.squeezed, "out, no longer squeezed");
    assert_eq!(e.watched(), vec![f.id.clone()]);
    // Its wake, seen at a tick, brings it back.
    f.cpu += Duration::from_millis(300);
    let (tr, cmds) = tick(&mut e, &[&f], at + 5.0);
    assert_eq!(tr[0], Some(Transition::Woke));
    assert_eq!(bring_backs(&cmds).len(), 1, "{cmds:?}");
}

/// On a host meant to be full the parent at its cap pages out whatever its
/// reclaim picks: a context the kernel paged out is out as with
/// `fast_wakes` (watched, read back at its wake), without its CPU weight.
#[test]
fn on_a_full_host_a_context_the_kernel_paged_out_is_out() {
    let mut e = Engine::new(params());
    let full = full_host();
    let mut c = paged_out_by_its_limit(&mut e, full);
    assert_eq!(e.watched(), vec![c.id.clone()]);
    assert_eq!(e.get(&c.id).and_then(|t| t.cpu_weight(s(9.0), true)), None);
    c.cpu += Duration::from_millis(300);
    let (tr, cmds) = tick(&mut e, &[&c], 9.0);
    assert_eq!(tr[0], Some(Transition::Woke));
    assert_eq!(bring_backs(&cmds).len(), 1, "read back in bulk: {cmds:?}");
}

/// An active context held for a predicted call (a timer's function, quiet
/// since its last call) is watched, and its warm call, a few ms of CPU, is
/// an onset recorded in its history: at a tick it was missed, and with one
/// interval twice the others its period was gone (bench/faas: a timer's
/// calls cold from its fifth on).
#[test]
fn a_warm_call_of_an_active_held_context_is_seen_and_recorded() {
    let mut e = Engine::new(params());
    let mut f = busy_on_a_full_host(&mut e, 60);
    for at in [2.0, 3.0, 4.0] {
        tick(&mut e, &[&f], at);
    }
    assert!(e.watched().is_empty(), "nothing out, nothing held");
    e.contexts.get_mut(&f.id).expect("tracked").held = Some((s(20.0), PrefetchReason::Periodic));
    assert_eq!(e.watched(), vec![f.id.clone()]);
    let polls = poll_twice(&mut e, &mut f, (4.5, 4.52), 2);
    assert_eq!(polls, (None, Some(Transition::Onset)));
    let t = e.get(&f.id).expect("tracked");
    assert_eq!(t.model.history.last(), Some(s(4.52)), "recorded");
    assert!(t.held.is_none(), "the call it was held for came");
}

/// A woken context's process waits on its read-back: unpaced, unless a
/// critical context shares the host (then at `prefetch_bandwidth`, as
/// every predicted one).
#[test]
fn a_wake_is_read_back_unpaced_unless_a_critical_context_shares_the_host() {
    for critical in [false, true] {
        let mut e = Engine::new(params());
        let mut c = Ctx::new("/woken", 64);
        let db = Ctx::new("/db", 100);
        e.track(c.id.clone(), Class::Extend, class(16), s(0.0));
        if critical {
            e.track(db.id.clone(), Class::Critical, class(0), s(0.0));
        }
        for i in 0..=6 {
            tick(&mut e, &[&c, &db], f64::from(i));
        }
        assert!(e.get(&c.id).is_some_and(|t| t.out), "pushed out");
        c.swapped = 48 * MIB;
        c.cpu += Duration::from_millis(50);
        let (tr, cmds) = tick(&mut e, &[&c, &db], 7.0);
        assert_eq!(tr[0], Some(Transition::Woke));
        let b = bring_backs(&cmds);
        let want = if critical { 800 * MIB } else { 0 };
        assert!(
            b.len() == 1 && b[0].bandwidth == want,
            "critical {critical}: {cmds:?}"
        );
    }
}

/// A timer's function on a host meant to be full, called at 10, 20 and
/// 30 s (seen at the ticks), resident and idle between calls, ticked to 36 s.
fn called_every_10_s(e: &mut Engine) -> Ctx {
    let mut f = Ctx::new("/timer", 60);
    let p = full_host();
    e.track(f.id.clone(), Class::Extend, p, s(0.0));
    for i in 0..=36 {
        if [10, 20, 30].contains(&i) {
            f.cpu += Duration::from_millis(300);
        }
        tick(e, &[&f], f64::from(i));
    }
    f
}

/// A timer's function that nothing pushed out: when its call is due it is
/// held as it is (nothing to read back) and watched, so its warm call is
/// seen and recorded; before, only a read-back held it, the warm call was
/// missed at the tick (2 ms of CPU), and the gap broke its period.
#[test]
fn a_resident_context_due_for_its_periodic_wake_is_held_and_its_warm_call_recorded() {
    let mut e = Engine::new(params());
    let mut f = called_every_10_s(&mut e);
    let t = e.get(&f.id).expect("tracked");
    assert_eq!(t.model.history.period(), Some(s(10.0)));
    assert!(
        !t.out && t.held.is_none() && e.watched().is_empty(),
        "resident, not watched yet"
    );
    // Due at 40 s: held from 37 s on (its lead is 3 s), and watched.
    tick(&mut e, &[&f], 37.5);
    assert!(e.get(&f.id).is_some_and(|t| t.held.is_some()));
    assert_eq!(e.watched(), vec![f.id.clone()]);
    let polls = poll_twice(&mut e, &mut f, (40.0, 40.02), 2);
    assert!(
        matches!(polls, (None, Some(Transition::Woke | Transition::Onset))),
        "{polls:?}"
    );
    let t = e.get(&f.id).expect("tracked");
    assert_eq!(t.model.history.last(), Some(s(40.02)), "recorded");
    assert_eq!(t.model.history.period(), Some(s(10.0)), "its period kept");
}

/// A held timer's warm call whose CPU came in the ms between a poll and
/// the tick is seen by the tick as a poll would have seen it: over the span
/// since that poll, not the tick's whole second (where 2 ms is below the
/// threshold). Before, the tick took it for rest, the next poll started
/// from the tick's reading, and the call went unseen: a period missing
/// from the history, the next call not predicted (bench/faas, session 88).
#[test]
fn a_held_contexts_call_just_before_a_tick_is_seen_by_the_tick() {
    let mut e = Engine::new(params());
    let mut f = held_for_its_call(&mut e);
    for at in [38.5, 39.5] {
        tick(&mut e, &[&f], at);
    }
    assert_eq!(e.poll(&f.id, s(40.49), f.cpu), None, "nothing yet");
    f.cpu += Duration::from_millis(2);
    let (seen, _) = tick(&mut e, &[&f], 40.5);
    assert!(
        matches!(seen[..], [Some(Transition::Woke | Transition::Onset)]),
        "{seen:?}"
    );
    let t = e.get(&f.id).expect("tracked");
    assert_eq!(t.model.history.last(), Some(s(40.5)), "recorded");
    assert_eq!(t.model.history.period(), Some(s(10.0)), "its period kept");
}

/// `called_every_10_s` ticked to 37.5 s: held for its call due at 40 s.
fn held_for_its_call(e: &mut Engine) -> Ctx {
    let f = called_every_10_s(e);
    tick(e, &[&f], 37.5);
    assert!(e.get(&f.id).is_some_and(|t| t.held.is_some()), "held");
    f
}

/// A held timer's runtime seen 2 s before its call (its pages just read
/// back: a blip of CPU at a poll) is recorded, but the call is still to
/// come: it stays held and watched until 3 s after the call was due (the
/// call, recorded by then, is the same wake and stands for it), then the
/// blip stands for the call. Before, the blip ended the hold, the schedule
/// went a period on, and in bench/faas the function was lowered or pushed
/// out as its call came.
#[test]
fn a_held_contexts_blip_before_its_call_keeps_it_held_until_the_call() {
    let mut e = Engine::new(params());
    let mut f = held_for_its_call(&mut e);
    let blip = poll_twice(&mut e, &mut f, (38.0, 38.02), 1);
    assert!(blip.1.is_some(), "the blip is seen: {blip:?}");
    let t = e.get(&f.id).expect("tracked");
    assert_eq!(t.model.history.last(), Some(s(38.02)), "recorded");
    assert!(t.held.is_some(), "still held for its call");
    assert_eq!(t.model.history.next_wake(s(38.5)), Some(s(40.0)));
    assert_eq!(e.watched(), vec![f.id.clone()]);
    for at in [38.5, 39.5] {
        tick(&mut e, &[&f], at);
        assert!(e.get(&f.id).is_some_and(|t| t.held.is_some()), "at {at}");
    }
    // The call at 40 s (the blip woke it: seen at the tick, no new wake,
    // but a call after a quiet reading: recorded, and the hold for it ends).
    f.cpu += Duration::from_millis(300);
    tick(&mut e, &[&f], 40.5);
    let t = e.get(&f.id).expect("tracked");
    assert_eq!(t.model.history.last(), Some(s(40.5)), "the call recorded");
    assert!(t.held.is_none(), "its call came");
    // One wake for the schedule: the blip and the call 2.5 s apart, the
    // call (nearer to when it was due) standing for both.
    assert_eq!(t.model.history.next_wake(s(41.5)), Some(s(50.5)));
}

/// A hold ends with the call it was for: held for a call due at 40 s that
/// never came, the function is no longer held once that call is overdue
/// by half a period (45 s). Left held, a function lowered meanwhile was
/// not marked out and not read back for its next call (bench/faas).
#[test]
fn a_hold_ends_when_its_call_is_no_longer_due() {
    let mut e = Engine::new(params());
    let f = held_for_its_call(&mut e);
    for at in 38..=44 {
        tick(&mut e, &[&f], f64::from(at));
        assert!(e.get(&f.id).is_some_and(|t| t.held.is_some()), "at {at}");
    }
    tick(&mut e, &[&f], 45.5);
    assert!(e.get(&f.id).is_some_and(|t| t.held.is_none()));
    assert!(e.watched().is_empty(), "no longer watched");
}

/// On a host meant to be full, a busy function (active, not quiet) whose
/// limit a wake's room lowered well below its usage has its next call
/// (seen as a `Call`, no onset) served as an onset: its pages read back in
/// bulk, not faulted in one by one. Not before the lowering.
#[test]
fn a_call_of_a_busy_function_lowered_for_room_is_served() {
    let mut e = Engine::new(params());
    let f = busy_on_a_full_host(&mut e, 60);
    assert!(!e.serves_call(&f.id), "its pages in: only recorded");
    let lowering = Command::Reclaim {
        id: f.id.clone(),
        bytes: 16 * MIB,
        urgent: false,
        resting: false,
        yields: true,
    };
    e.executed(&lowering, Outcome::Done, s(1.2));
    assert!(e.serves_call(&f.id), "44 MiB of it paged out");
    let cmds = e.serve_wake(&f.id, s(1.3), &HOST, &never_busy);
    assert_eq!(bring_backs(&cmds).len(), 1, "read back in bulk: {cmds:?}");
}
