//! What is a wake: faults memext caused itself (its own read-backs and
//! page-outs, seen now or read later) are not one.

use super::*;

/// An engine tracking one extend context of 64 MiB, idle after six ticks.
fn idle_after_six_ticks(name: &str) -> (Engine, Ctx) {
    let mut e = Engine::new(params());
    let c = Ctx::new(name, 64);
    e.track(c.id.clone(), Class::Extend, class(16), s(0.0));
    for i in 0..=6 {
        tick(&mut e, &[&c], f64::from(i));
    }
    assert_eq!(e.get(&c.id).map(|t| t.model.state), Some(State::Idle));
    (e, c)
}

/// `c`'s sample at `at` with `minor` minor faults more than its own count.
fn with_minor(c: &Ctx, at: f64, minor: u64) -> Sample {
    let mut smp = c.sample(at);
    smp.memory.pgfault += minor;
    smp
}

#[test]
fn memexts_own_faults_are_not_a_wake() {
    let (mut e, mut c) = idle_after_six_ticks("/moved");
    // The mover reads pages back (a predicted bring-back): the kernel counts
    // its swap-ins to the context as major faults.
    c.majflt += 5000;
    let o = e.observe(&c.id, c.sample(7.0), true);
    assert_eq!(o.transition, None);
    let o = e.observe(&c.id, c.sample(8.0), false);
    assert_eq!(o.transition, None, "faults while moving stay memext's");
    // A fault charged to it while it did not run: someone read its memory.
    c.majflt += 1;
    let o = e.observe(&c.id, c.sample(9.0), false);
    assert_eq!(o.transition, None, "a fault it did not run for");
    // A few faults of its own (a runtime's housekeeping) are no wake yet.
    c.majflt += 16;
    c.cpu += Duration::from_millis(1);
    let o = e.observe(&c.id, c.sample(10.0), false);
    assert_eq!(o.transition, None, "a runtime's housekeeping");
    c.majflt += 100;
    c.cpu += Duration::from_millis(1);
    let o = e.observe(&c.id, c.sample(11.0), false);
    assert_eq!(
        o.transition,
        Some(Transition::Woke),
        "the context's own faults"
    );
}

/// The mover maps a context's pages from outside (`memext_sys::populate`)
/// and says how many faults that took: the kernel counts them to the
/// context's cgroup as its own, and a reading seconds later (the mover long
/// done, so no moving flag covers it) must not take them, with the
/// runtime's own bit of CPU, for a wake. Faults beyond them still count.
#[test]
fn faults_memext_caused_from_outside_are_not_a_wake_when_read_later() {
    let (mut e, mut c) = idle_after_six_ticks("/mapped");
    // 833 pages mapped from outside, read 1 s later with 1.7 ms of the
    // runtime's CPU (bench/faas, session 68: read as an onset).
    e.faults_caused(&c.id, (833, 0));
    c.cpu += Duration::from_micros(1700);
    let o = e.observe(&c.id, with_minor(&c, 8.0, 833), false);
    assert_eq!(o.transition, None, "memext's own faults, read later");
    // More said than the next reading shows: the rest is left out of the one
    // after it.
    e.faults_caused(&c.id, (500, 0));
    c.cpu += Duration::from_millis(1);
    let o = e.observe(&c.id, with_minor(&c, 9.0, 833 + 300), false);
    assert_eq!(o.transition, None);
    c.cpu += Duration::from_millis(1);
    let o = e.observe(&c.id, with_minor(&c, 10.0, 833 + 500), false);
    assert_eq!(o.transition, None, "the 200 still pending");
    // Its own faults are its own.
    c.cpu += Duration::from_millis(1);
    let o = e.observe(&c.id, with_minor(&c, 11.0, 833 + 500 + 200), false);
    assert_eq!(o.transition, Some(Transition::Woke), "its own faults");
}

/// What the mover says it caused, taken while the readings already leave
/// out every fault as the mover's (it moves the context's pages), is not
/// left over to hide the context's own faults after.
#[test]
fn faults_memext_caused_while_it_moved_the_pages_hide_nothing_after() {
    let (mut e, mut c) = idle_after_six_ticks("/moving");
    // Read while the mover works: 200 of its 1,000 faults counted by then.
    assert_eq!(
        e.observe(&c.id, with_minor(&c, 7.0, 200), true).transition,
        None
    );
    e.faults_caused(&c.id, (1000, 0));
    assert_eq!(
        e.observe(&c.id, with_minor(&c, 8.0, 1000), false)
            .transition,
        None
    );
    // The context's own 100 faults and CPU: a wake.
    c.cpu += Duration::from_millis(1);
    let o = e.observe(&c.id, with_minor(&c, 9.0, 1100), false);
    assert_eq!(o.transition, Some(Transition::Woke), "its own faults");
}
