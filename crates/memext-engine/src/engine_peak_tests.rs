//! Admission at the peak on a simulated trace: two batch jobs that each
//! grow to a peak, free it and start again; the one that starts again
//! while the other's peak leaves no room for its own waits frozen.

use super::admission::freezes;
use super::*;
use crate::context::START_GRACE;

/// Seconds from here on count from the end of the contexts' start
/// (`START_GRACE` after they are tracked at 0): before it, none runs in turn.
fn tick(e: &mut Engine, ctxs: &[&Ctx], at: f64) -> (Vec<Option<Transition>>, Vec<Command>) {
    super::tick(e, ctxs, at + START_GRACE.as_secs_f64())
}

fn after_start(at: f64) -> Instant {
    s(at) + START_GRACE
}

fn at_peak(on: bool) -> ClassParams {
    ClassParams {
        admit_within: Duration::from_secs(60),
        admit_at_peak: on,
        ..class(16)
    }
}

/// An engine tracking jobs `/a` and `/b`, admitted at the peak or not.
fn two_jobs(at_the_peak: bool) -> (Engine, Ctx, Ctx) {
    let mut e = Engine::new(params());
    let (a, b) = (Ctx::new("/a", 0), Ctx::new("/b", 0));
    for c in [&a, &b] {
        e.track(c.id.clone(), Class::Extend, at_peak(at_the_peak), s(0.0));
    }
    (e, a, b)
}

/// Job `a` grows to 600 MiB and pauses holding `holds` (MiB in DRAM, in
/// swap), `b` grows to 500 MiB and runs on; at 7 s `a` runs again (an
/// onset). Every freeze and thaw, with its tick.
fn a_starts_again_beside_b(
    e: &mut Engine,
    a: &mut Ctx,
    b: &mut Ctx,
    holds: (u64, u64),
) -> Vec<(u32, String, bool)> {
    let run = |c: &mut Ctx| c.cpu += Duration::from_millis(500);
    let mut seen = Vec::new();
    let mut note = |at: u32, cmds: &[Command]| {
        seen.extend(
            freezes(cmds)
                .into_iter()
                .map(|(id, f)| (at, id.to_string(), f)),
        );
    };
    for (at, (ua, ub)) in (0..).zip([(100, 100), (300, 200), (500, 300), (600, 400)]) {
        (a.usage, b.usage) = (ua * MIB, ub * MIB);
        run(a);
        run(b);
        note(at, &tick(e, &[a, b], f64::from(at)).1);
    }
    // `a` pauses; `b` goes on to its peak.
    (a.usage, a.swapped) = (holds.0 * MIB, holds.1 * MIB);
    b.usage = 500 * MIB;
    for at in 4..7 {
        run(b);
        note(at, &tick(e, &[a, b], f64::from(at)).1);
    }
    run(a);
    run(b);
    let (tr, cmds) = tick(e, &[a, b], 7.0);
    assert_eq!(tr[0], Some(Transition::Onset));
    note(7, &cmds);
    seen
}

#[test]
fn a_job_that_starts_again_waits_frozen_until_its_peak_fits() {
    let (mut e, mut a, mut b) = two_jobs(true);
    // 1024 - 2 x 16 (floors) = 992. Both began at 0 s, `a` first: as long
    // as `a` runs, its 600 MiB peak is kept for it, and `b`, grown to 500,
    // is out of its turn at 4 s: it waits frozen, queued. Quiet from 5 s
    // (it freed its heap), `a` keeps no room, and `b` is let in. At 7 s `a`
    // starts a job again: queued behind `b`; its 600 MiB do not fit
    // beside `b`'s 500.
    let seen = a_starts_again_beside_b(&mut e, &mut a, &mut b, (20, 0));
    let at = |t: u32| -> Vec<(&str, bool)> {
        let mut v: Vec<(&str, bool)> = seen
            .iter()
            .filter(|s| s.0 == t)
            .map(|s| (s.1.as_str(), s.2))
            .collect();
        v.sort();
        v
    };
    assert_eq!(at(4), vec![("/b", true)], "{seen:?}");
    assert_eq!(at(5), vec![("/b", false)], "{seen:?}");
    assert_eq!(at(7), vec![("/a", true)], "{seen:?}");
    assert_eq!(seen.len(), 3, "{seen:?}");
    let t = e.get(&a.id).expect("tracked");
    assert_eq!(t.waiting_since, Some(after_start(7.0)));
    assert_eq!(t.target, 16 * MIB, "waits at its floor");

    // `b` works on until 30 s, ends its job and pauses. Quiet for 2 s, it
    // keeps no room: `a` is let in at 32 s with room for its peak.
    for at in 8..31 {
        b.cpu += Duration::from_millis(500);
        tick(&mut e, &[&a, &b], f64::from(at));
    }
    b.usage = 20 * MIB;
    let mut f = Vec::new();
    for at in 31..33 {
        let (_, cmds) = tick(&mut e, &[&a, &b], f64::from(at));
        f.extend(
            freezes(&cmds)
                .into_iter()
                .map(|(id, fr)| (at, id.to_string(), fr)),
        );
    }
    assert_eq!(f, vec![(32, "/a".to_string(), false)]);
    assert!(e.get(&a.id).is_some_and(|t| t.target >= 600 * MIB));
    // Let in, it runs: the 25 s it waited are no stretch without activity
    // (idle after 5 s), and its first readings, judged from its last
    // before it was let in, no onset (0.5 s of CPU over the 26 s since its
    // last reading before it froze is below the activity share).
    for at in 33..36 {
        a.cpu += Duration::from_millis(500);
        let (tr, _) = tick(&mut e, &[&a, &b], f64::from(at));
        assert_eq!(tr[0], None, "at {at} s");
    }
    // `b` starts again at 36 s, queued behind `a`, which runs: it waits.
    a.cpu += Duration::from_millis(500);
    b.cpu += Duration::from_millis(500);
    let (_, cmds) = tick(&mut e, &[&a, &b], 36.0);
    assert_eq!(freezes(&cmds), vec![("/b", true)], "{cmds:?}");
    assert_eq!(e.get(&a.id).map(|t| t.model.state), Some(State::Active));
}

#[test]
fn without_admission_at_the_peak_a_job_that_starts_again_runs_at_once() {
    let (mut e, mut a, mut b) = two_jobs(false);
    assert!(a_starts_again_beside_b(&mut e, &mut a, &mut b, (20, 0)).is_empty());
    assert_eq!(e.get(&a.id).and_then(|t| t.waiting_since), None);
    assert_eq!(e.get(&b.id).and_then(|t| t.waiting_since), None);
}

#[test]
fn a_job_that_stalled_holding_its_heap_goes_on_at_its_onset() {
    let (mut e, mut a, mut b) = two_jobs(true);
    // Quiet for 2 s waiting on its swap-ins, half its heap in swap: the
    // same job, not a new one; not queued (only `b` waited, out of its
    // turn beside `a`'s 600 MiB).
    let seen = a_starts_again_beside_b(&mut e, &mut a, &mut b, (300, 300));
    assert!(seen.iter().all(|s| s.1 == "/b"), "{seen:?}");
    let t = e.get(&a.id).expect("tracked");
    assert_eq!(t.waiting_since, None);
    assert_eq!(t.peak.expected(), 600 * MIB);
}

#[test]
fn a_context_just_tracked_is_not_frozen_and_then_runs_behind_the_running_ones() {
    let mut e = Engine::new(params());
    let mut a = Ctx::new("/a", 0);
    e.track(a.id.clone(), Class::Extend, at_peak(true), s(0.0));
    let run = |c: &mut Ctx| c.cpu += Duration::from_millis(500);
    for (at, mib) in (0..).zip([200, 400, 600, 600, 600, 600, 600, 600]) {
        a.usage = mib * MIB;
        run(&mut a);
        tick(&mut e, &[&a], f64::from(at));
    }
    // A container started at 8 s beside `a`'s 600 MiB (1024 - 2 x 16 of
    // floors leave 992): its runtime may not have started it yet, and a
    // frozen cgroup fails `runc start`. Not frozen for `START_GRACE`;
    // then it runs in turn behind `a` (though its id sorts first), and
    // does not fit.
    let mut n = Ctx::new("/0-new", 450);
    e.track(n.id.clone(), Class::Extend, at_peak(true), after_start(8.0));
    let mut seen = Vec::new();
    for at in 8..15 {
        run(&mut a);
        run(&mut n);
        let (_, cmds) = tick(&mut e, &[&a, &n], f64::from(at));
        seen.extend(
            freezes(&cmds)
                .into_iter()
                .map(|(id, f)| (at, id.to_string(), f)),
        );
    }
    assert_eq!(seen, vec![(13, "/0-new".to_string(), true)], "{seen:?}");
}
