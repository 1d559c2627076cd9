//! On a host meant to be full (`push_out = "when-needed"`): idle contexts
//! pushed out only as far as the capacity needs, active ones squeezed and
//! paged out for room, woken functions resting once their calls are over
//! (the margins and slack it keeps: `engine_growth_tests.rs`).

use super::*;

/// `push_out = "when-needed"`: an idle context is not pushed out while the
/// capacity has room for it; when a waking one needs that room, it is
/// pushed out only as far as needed.
#[test]
fn an_idle_context_pushed_out_when_needed_stays_while_there_is_room() {
    let mut e = Engine::new(params());
    let keep = full_host();
    let (idle, mut other) = (Ctx::new("/idle", 400), Ctx::new("/other", 400));
    assert!(e.track(idle.id.clone(), Class::Extend, keep.clone(), s(0.0)));
    assert!(e.track(other.id.clone(), Class::Extend, keep, s(0.0)));
    let mut pushed = Vec::new();
    for i in 0..=8 {
        let (_, cmds) = tick(&mut e, &[&idle, &other], f64::from(i));
        pushed.extend(push_outs(&cmds).into_iter().cloned());
    }
    assert!(pushed.is_empty(), "800 MiB fit in 1024: {pushed:?}");
    assert_eq!(e.get(&idle.id).map(|t| t.model.state), Some(State::Idle));
    // The other one wakes and grows to 700 MiB: the idle one makes room.
    other.cpu += Duration::from_millis(500);
    other.usage = 700 * MIB;
    let (_, cmds) = tick(&mut e, &[&idle, &other], 9.0);
    let p = push_outs(&cmds);
    assert_eq!(p.len(), 1, "{cmds:?}");
    assert_eq!(p[0].id, idle.id);
    assert!(
        p[0].keep_bytes > 16 * MIB && p[0].keep_bytes < 400 * MIB,
        "as far as needed, not to its floor: {} MiB",
        p[0].keep_bytes / MIB
    );
}

/// On a host meant to be full, `/rests` (700 MiB) and `/wakes` (400 MiB)
/// both ran, then rested; the waker's pages went out (the host's
/// reclaim) but 16 MiB.
fn resting_beside_a_paged_out_one(e: &mut Engine) -> (Ctx, Ctx) {
    resting_of_beside_a_paged_out_one(e, 700)
}

/// `resting_beside_a_paged_out_one`, `/rests` of `mib` MiB.
fn resting_of_beside_a_paged_out_one(e: &mut Engine, mib: u64) -> (Ctx, Ctx) {
    let keep = full_host();
    let (mut rests, mut wakes) = (Ctx::new("/rests", mib), Ctx::new("/wakes", 400));
    for c in [&rests, &wakes] {
        assert!(e.track(c.id.clone(), Class::Extend, keep.clone(), s(0.0)));
    }
    for i in 0..=8 {
        if i < 2 {
            rests.cpu += Duration::from_millis(500);
            wakes.cpu += Duration::from_millis(500);
        }
        if i == 6 {
            (wakes.usage, wakes.swapped) = (16 * MIB, 384 * MIB);
        }
        tick(e, &[&rests, &wakes], f64::from(i));
    }
    (rests, wakes)
}

/// A wake served between ticks by a plan that squeezed a resting context
/// leaves that plan's room account for the daemon's log, once.
#[test]
fn a_wake_between_ticks_that_squeezes_a_resting_context_leaves_its_account() {
    let mut e = Engine::new(params());
    let (rests, mut wakes) = resting_beside_a_paged_out_one(&mut e);
    assert_eq!(e.take_wake_room(), None, "no wake served yet");
    let (_, woke) = poll_twice(&mut e, &mut wakes, (8.1, 8.2), 50);
    assert!(woke.is_some(), "woke");
    e.serve_wake(&wakes.id, s(8.2), &super::reclaim::BG, &never_busy);
    let room = e
        .take_wake_room()
        .expect("the wake's plan squeezed the resting one");
    assert_eq!(room.squeezed.len(), 1, "{room:?}");
    assert_eq!(room.squeezed[0].key, rests.id);
    assert!(room.squeezed[0].target < 700 * MIB, "{room:?}");
    assert_eq!(e.take_wake_room(), None, "taken once");
}

/// Both contexts ran 0.9 s more and are observed at `at` (`moving`: the
/// mover has a job for `batch`).
fn both_run(e: &mut Engine, db: &mut Ctx, batch: &mut Ctx, at: f64, moving: bool) {
    db.cpu += Duration::from_millis(900);
    batch.cpu += Duration::from_millis(900);
    e.observe(&db.id, db.sample(at), false);
    e.observe(&batch.id, batch.sample(at), moving);
}

/// An active context squeezed for room a critical one needs is paged out by
/// the mover first (at its priority, hottest chunks kept); its limit is not
/// written below its usage until the page-out is done, so that the daemon's
/// loop does not reclaim it (a v1 limit write does, in the writer), unless
/// a critical context is under pressure meanwhile.
#[test]
fn an_active_context_squeezed_for_room_is_paged_out_before_its_limit_falls() {
    let mut e = Engine::new(params());
    let mut db = Ctx::new("/db", 600);
    let mut batch = Ctx::new("/batch", 300);
    e.track(db.id.clone(), Class::Critical, class(16), s(0.0));
    e.track(batch.id.clone(), Class::Extend, class(16), s(0.0));
    db.cpu = Duration::from_millis(500);
    batch.cpu = Duration::from_millis(500);
    tick(&mut e, &[&db, &batch], 0.0);
    // The critical context grows: 1024 - 880 (800 + 10%) = 144 MiB left.
    db.usage = 800 * MIB;
    both_run(&mut e, &mut db, &mut batch, 1.0, false);
    let d = e.decide(s(1.0), &HOST, &never_busy);
    let p = push_outs(&d.commands);
    assert_eq!(p.len(), 1, "{:?}", d.commands);
    assert_eq!(p[0].id, batch.id);
    assert_eq!(p[0].keep_bytes, 144 * MIB);
    assert!(
        limits(&d.commands).iter().all(|&b| b >= 300 * MIB),
        "not squeezed below its usage by the limit: {:?}",
        d.commands
    );
    for cmd in &d.commands {
        e.executed(cmd, Outcome::Done, s(1.0));
    }
    assert!(
        !e.get(&batch.id).expect("tracked").out,
        "still running: not a pushed-out context (its working set is still recorded)"
    );
    // The mover still at it, and now the critical context is under pressure:
    // it needs the room at once, so the limit falls to the target now.
    db.psi = Some(50.0);
    both_run(&mut e, &mut db, &mut batch, 1.5, true);
    let busy = |id: &ContextId| id.as_str() == "/batch";
    let d = e.decide(s(1.5), &HOST, &busy);
    assert_eq!(limits(&d.commands), vec![144 * MIB], "{:?}", d.commands);
    db.psi = None;
    // The mover is done, the context at 150 MiB: the limit falls to its target.
    batch.usage = 150 * MIB;
    both_run(&mut e, &mut db, &mut batch, 2.0, false);
    let d = e.decide(s(2.0), &HOST, &never_busy);
    assert_eq!(limits(&d.commands), vec![144 * MIB], "{:?}", d.commands);
    assert!(push_outs(&d.commands).is_empty(), "within the slack");
}

/// An active context paged out for room and then quiet (a function called
/// on a timer more often than it is judged idle) is brought back when it
/// starts again, like a wake, and its start is recorded in its history.
#[test]
fn an_active_context_squeezed_for_room_is_brought_back_at_its_next_onset() {
    let mut e = Engine::new(params());
    let mut db = Ctx::new("/db", 600);
    let mut func = Ctx::new("/func", 300);
    let full = full_host();
    e.track(db.id.clone(), Class::Critical, class(16), s(0.0));
    e.track(func.id.clone(), Class::Extend, full, s(0.0));
    tick(&mut e, &[&db, &func], 0.0);
    db.usage = 800 * MIB;
    both_run(&mut e, &mut db, &mut func, 1.0, false);
    let d = e.decide(s(1.0), &HOST, &never_busy);
    assert_eq!(push_outs(&d.commands).len(), 1, "{:?}", d.commands);
    for cmd in &d.commands {
        e.executed(cmd, Outcome::Done, s(1.0));
    }
    // Paged out to its target; quiet for 3 s (idle only after 5 s).
    (func.usage, func.swapped, db.usage) = (144 * MIB, 156 * MIB, 600 * MIB);
    for at in [2.0, 3.0, 4.0] {
        db.cpu += Duration::from_millis(900);
        let (tr, cmds) = tick(&mut e, &[&db, &func], at);
        assert_eq!(tr[1], None);
        assert!(
            bring_backs(&cmds).is_empty(),
            "quiet: nothing to bring back yet"
        );
    }
    func.cpu += Duration::from_millis(300);
    db.cpu += Duration::from_millis(900);
    let (tr, cmds) = tick(&mut e, &[&db, &func], 5.0);
    assert_eq!(tr[1], Some(Transition::Onset));
    let b = bring_backs(&cmds);
    assert_eq!(b.len(), 1, "{cmds:?}");
    assert_eq!((&b[0].id, b[0].reason), (&func.id, PrefetchReason::Woke));
    let t = e.get(&func.id).expect("tracked");
    assert_eq!(t.model.state, State::Active);
    assert_eq!(t.model.history.last(), Some(s(5.0)));
    assert!(!t.squeezed, "brought back");
}

/// A predicted bring-back that needs room another context holds is sent
/// after what makes that room (the mover keeps the order): its push-out,
/// or, pushed out already, its lowered limit. Read back first into the full
/// capacity, its pages were reclaimed again before the wake came.
#[test]
fn a_predicted_bring_back_is_sent_after_the_push_out_that_makes_its_room() {
    let mut e = Engine::new(params());
    let keep = full_host();
    let mut cron = Ctx::new("/cron", 128);
    let mut keeper = Ctx::new("/keeper", 900);
    e.track(cron.id.clone(), Class::Extend, class(16), s(0.0));
    e.track(keeper.id.clone(), Class::Extend, keep, s(0.0));
    let mut t = 0.0;
    while t <= 70.0 {
        // Busy for one second every 15 s, from 10 s.
        if t >= 10.0 && (t - 10.0) % 15.0 < 1.0 {
            cron.cpu += Duration::from_millis(250);
        }
        // The keeper runs until 60 s, then sleeps, keeping what it holds.
        if t < 60.0 {
            keeper.cpu += Duration::from_millis(250);
        }
        let (_, cmds) = tick(&mut e, &[&cron, &keeper], t);
        let pos = |want: fn(&Command) -> bool| cmds.iter().position(want);
        let back =
            pos(|c| matches!(c, Command::BringBack(b) if b.reason == PrefetchReason::Periodic));
        if let Some(back) = back {
            let push = pos(|c| match c {
                Command::PushOut(p) => p.id.as_str() == "/keeper",
                Command::Limit { id, bytes } => id.as_str() == "/keeper" && *bytes < 900 * MIB,
                _ => false,
            });
            let push = push.unwrap_or_else(|| {
                panic!("the keeper makes room in the same tick at {t}: {cmds:?}")
            });
            assert!(push < back, "push-out first: {cmds:?}");
            return;
        }
        let out = e.get(&cron.id).is_some_and(|t| t.out);
        (cron.usage, cron.swapped) = if out {
            (16 * MIB, 112 * MIB)
        } else {
            (128 * MIB, 0)
        };
        t += 0.5;
    }
    panic!("no periodic bring-back");
}

/// On a host meant to be full, paged out for room while it runs, a
/// context's resident set is what memext left it: its working set recorded
/// before stands (a bring-back
/// sized from the remainder was reclaimed at once at its own limit).
#[test]
fn a_squeezed_context_keeps_the_working_set_recorded_before() {
    let mut e = Engine::new(params());
    let mut db = Ctx::new("/db", 600);
    let mut batch = Ctx::new("/batch", 300);
    let full = full_host();
    e.track(db.id.clone(), Class::Critical, class(16), s(0.0));
    e.track(batch.id.clone(), Class::Extend, full, s(0.0));
    tick(&mut e, &[&db, &batch], 0.0);
    db.usage = 800 * MIB;
    for at in 1..=25 {
        db.cpu += Duration::from_millis(900);
        batch.cpu += Duration::from_millis(900);
        tick(&mut e, &[&db, &batch], f64::from(at));
        if e.get(&batch.id).is_some_and(|t| t.squeezed) {
            (batch.usage, batch.swapped) = (144 * MIB, 156 * MIB);
        }
    }
    let t = e.get(&batch.id).expect("tracked");
    assert!(t.squeezed && t.model.state == State::Active);
    assert_eq!(
        t.working_set_bytes(),
        300 * MIB,
        "not the 144 MiB left resident"
    );
}

/// On a host meant to be full (`when-needed`), or with `fast_wakes`, pages
/// the kernel put in swap (at the context's own limit, not by memext's
/// push-out) are brought back at its onset, once; under `when-idle` alone
/// they are not (the onsets of bench/peers' noise, read back at nice 0, took
/// CPU its critical workloads needed).
#[test]
fn what_its_limit_paged_out_is_brought_back_at_an_onset_on_a_full_host() {
    for (push_out, fast_wakes, back) in [
        (PushOutWhen::Needed, false, 1),
        (PushOutWhen::Idle, false, 0),
        (PushOutWhen::Idle, true, 1),
    ] {
        let mut e = Engine::new(params());
        let mut f = Ctx::new("/func", 20);
        let p = ClassParams {
            push_out,
            fast_wakes,
            ..class(16)
        };
        e.track(f.id.clone(), Class::Extend, p, s(0.0));
        f.cpu = Duration::from_millis(300);
        tick(&mut e, &[&f], 0.0);
        tick(&mut e, &[&f], 1.0);
        f.swapped = 53 * MIB;
        for at in [2.0, 3.0, 4.0] {
            let (_, cmds) = tick(&mut e, &[&f], at);
            assert!(bring_backs(&cmds).is_empty(), "quiet at {at}: {cmds:?}");
        }
        f.cpu += Duration::from_millis(300);
        let (tr, cmds) = tick(&mut e, &[&f], 5.0);
        assert_eq!(tr[0], Some(Transition::Onset), "recorded either way");
        let case = format!("{push_out:?}, fast_wakes {fast_wakes}");
        assert_eq!(bring_backs(&cmds).len(), back, "{case}: {cmds:?}");
        if back == 1 {
            assert!(limits(&cmds).iter().all(|&b| b >= 73 * MIB), "{cmds:?}");
            // What is still in swap after its read-back is not read again.
            f.cpu += Duration::from_millis(300);
            f.swapped = 12 * MIB;
            let (_, cmds) = tick(&mut e, &[&f], 6.0);
            assert!(bring_backs(&cmds).is_empty(), "{case}: {cmds:?}");
        }
    }
}

/// On a host meant to be full, a woken function whose call is over (no
/// activity for a tick, nothing being read back) rests in the plan: the
/// keep order weighs it with the resting ones, instead of its keeping what
/// it has ahead of them until it settles (2 s) and goes quiet. Elsewhere a
/// wake is a wake until it settles.
#[test]
fn on_a_full_host_a_woken_function_rests_once_its_call_is_over() {
    for (push_out, rests) in [(PushOutWhen::Needed, true), (PushOutWhen::Idle, false)] {
        let mut e = Engine::new(params());
        let mut f = Ctx::new("/func", 60);
        let p = ClassParams {
            push_out,
            ..class(4)
        };
        e.track(f.id.clone(), Class::Extend, p, s(0.0));
        f.cpu = Duration::from_millis(300);
        tick(&mut e, &[&f], 0.0);
        for at in 1..=7 {
            tick(&mut e, &[&f], f64::from(at));
        }
        assert_eq!(e.get(&f.id).map(|t| t.model.state), Some(State::Idle));
        // Its call: 300 ms of CPU seen at the tick.
        f.cpu += Duration::from_millis(300);
        let (tr, _) = tick(&mut e, &[&f], 8.0);
        assert_eq!(tr[0], Some(Transition::Woke));
        let seen = |e: &Engine, at: f64| {
            let c = &e.plan_input(s(at), 1024 * MIB).contexts[0];
            (c.state, c.quiet)
        };
        assert_eq!(seen(&e, 8.5), (State::Waking, false), "in its call");
        // A tick without activity: the call is over.
        tick(&mut e, &[&f], 9.0);
        assert_eq!(e.get(&f.id).map(|t| t.model.state), Some(State::Waking));
        let want = if rests {
            (State::Active, true)
        } else {
            (State::Waking, false)
        };
        assert_eq!(seen(&e, 9.0), want, "{push_out:?}");
    }
}

/// A timer's function left resident between its calls, on a host meant to
/// be full, is held for its predicted call; where its class maps what it
/// kept (`map_kept`), it is also sent a predicted bring-back that maps its
/// whole blocks, so that the call does not set the accessed bit of each
/// page reclaim's scans cleared. Without `map_kept` nothing is sent.
#[test]
fn a_resident_timer_function_held_for_its_call_has_what_it_kept_mapped() {
    let sent = |map_kept: bool| {
        let mut e = Engine::new(params());
        let mut c = Ctx::new("/timer", 128);
        let p = ClassParams {
            push_out: PushOutWhen::Needed,
            map_kept,
            ..class(16)
        };
        e.track(c.id.clone(), Class::Extend, p, s(0.0));
        let mut sent = Vec::new();
        every_15_s(&mut e, &mut c, |e, c, t, cmds| {
            assert!(e.get(&c.id).is_some_and(|t| !t.out), "left resident");
            sent.extend(bring_backs(cmds).into_iter().map(|b| (t, b.clone())));
        });
        sent
    };
    assert!(sent(false).is_empty(), "resident: nothing to read back");
    let sent = sent(true);
    assert!(!sent.is_empty(), "held, and its blocks mapped");
    for (at, b) in &sent {
        assert!(
            b.reason == PrefetchReason::Periodic && b.map_back && b.map_kept,
            "{b:?}"
        );
        // Predicted 3 s ahead, from the third wake on.
        let next_wake = next_call_after(*at);
        assert!(
            (next_wake - at - 3.0).abs() <= 0.5,
            "at {at}, wake {next_wake}"
        );
    }
}

/// A timer's function a refill read back between two of its calls (its
/// pages in the swap cache, none mapped) is sent a periodic bring-back
/// that maps them when it is held for its next call, as one pushed out is,
/// where its class maps back: without `map_kept`, nothing else is sent to
/// a resident one. Its call maps them itself after: the calls after it get
/// nothing.
#[test]
fn a_timer_function_refilled_between_calls_is_mapped_before_its_next() {
    let mut e = Engine::new(params());
    let mut c = Ctx::new("/timer", 128);
    let p = full_host();
    e.track(c.id.clone(), Class::Extend, p, s(0.0));
    // `every_15_s`'s calls (it lends the engine only to read): a refill
    // after the call at 40 s, done.
    let mut sent = Vec::new();
    let mut t = 0.0;
    while t <= 70.0 {
        if t >= 10.0 && (t - 10.0) % 15.0 < 1.0 {
            c.cpu += Duration::from_millis(250);
        }
        let (_, cmds) = tick(&mut e, &[&c], t);
        sent.extend(bring_backs(&cmds).into_iter().map(|b| (t, b.clone())));
        if (t - 44.0).abs() < f64::EPSILON {
            let refill = e
                .get(&c.id)
                .map(|ctx| e.bring_back(ctx, PrefetchReason::Refill, 1, s(t), &HOST));
            let refill = refill.expect("tracked");
            assert!(!refill.map_back);
            e.executed(&Command::BringBack(refill), Outcome::Done, s(t));
        }
        t += 0.5;
    }
    assert_eq!(sent.len(), 1, "{sent:?}");
    let (at, b) = &sent[0];
    assert!(b.reason == PrefetchReason::Periodic && b.map_back, "{b:?}");
    // 3 s before the call at 55 s.
    assert!((at - 52.0).abs() <= 0.5, "at {at}");
}

/// On a host meant to be full, the lowerings that make a wake's room
/// between ticks yield to its read-back (the wake reads into the room kept
/// free for it; the page-outs would take the CPU it needs).
#[test]
fn a_resting_context_lowered_for_a_wake_on_a_full_host_yields_to_its_read_back() {
    let mut e = Engine::new(params());
    let (_, mut wakes) = resting_beside_a_paged_out_one(&mut e);
    let (_, woke) = poll_twice(&mut e, &mut wakes, (8.1, 8.2), 50);
    assert!(woke.is_some(), "woke");
    let cmds = e.serve_wake(&wakes.id, s(8.2), &super::reclaim::BG, &never_busy);
    assert_eq!(
        super::reclaim::yielding(&cmds),
        vec![("/rests", true)],
        "{cmds:?}"
    );
}

/// On a host meant to be full, a resting context whose limit a wake's room
/// lowers well below its usage is out from that lowering on (idle; an
/// active one squeezed): watched between ticks while its pages go and
/// after, so that its next call is seen as it comes, not at the next tick
/// (`ContextState::note_lowered`).
#[test]
fn a_resting_context_lowered_for_a_wake_is_watched_from_that_lowering() {
    let mut e = Engine::new(params());
    let (rests, mut wakes) = resting_of_beside_a_paged_out_one(&mut e, 600);
    assert!(!e.watched().contains(&rests.id), "all in: not watched");
    let (_, woke) = poll_twice(&mut e, &mut wakes, (8.1, 8.2), 50);
    assert!(woke.is_some(), "woke");
    let cmds = e.serve_wake(&wakes.id, s(8.2), &super::reclaim::BG, &never_busy);
    assert_eq!(super::reclaim::yielding(&cmds), vec![("/rests", true)]);
    for c in &cmds {
        e.executed(c, Outcome::Done, s(8.2));
    }
    let t = e.get(&rests.id).expect("tracked");
    assert!(t.out || t.squeezed, "paged out from the lowering on");
    assert!(e.watched().contains(&rests.id), "{cmds:?}");
}
