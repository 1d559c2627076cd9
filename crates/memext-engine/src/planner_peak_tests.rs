//! Admission at the peak: jobs that grow to a peak over time are let in
//! one after another as their peaks fit.
use super::tests::{ctx, queued, target, waits, MIB};
use super::*;
use std::time::Duration;

/// A job between two stretches of activity: it holds `usage_mib` now and
/// reached `peak_mib` in its last stretch.
fn job(key: &str, usage_mib: u64, peak_mib: u64) -> ContextInput {
    ContextInput {
        peak: peak_mib * MIB,
        in_turn: Some(Duration::ZERO),
        ..ctx(key, Class::Extend, State::Active, usage_mib, 0)
    }
}

#[test]
fn a_job_is_let_in_only_when_its_peak_fits_beside_the_running_ones_peaks() {
    let input = PlanInput {
        capacity: 1000 * MIB,
        contexts: vec![
            ctx("db", Class::Critical, State::Active, 200, 200),
            // Admitted before, running, not at its peak yet.
            job("a", 100, 300),
            // Both started again after a pause, holding little.
            queued(job("b", 40, 300), 1, false),
            queued(job("c", 40, 300), 2, false),
        ],
    };
    let p = plan(&input);
    // 1000 - 220 (db) - 3 x 32 (floors) = 684: a keeps room for its peak
    // (268 more), b is let in for its own (268), 148 left: c waits, at
    // its floor; the 148 are split between the two that run.
    assert_eq!(waits(&p), vec!["c"]);
    assert_eq!(target(&p, &input, "c"), 32 * MIB);
    assert_eq!(target(&p, &input, "a"), (300 + 74) * MIB);
    assert_eq!(target(&p, &input, "b"), (300 + 74) * MIB);
    assert!(p.targets.iter().sum::<u64>() <= input.capacity);

    // Admitted for what they hold, all three run and share the 780 MiB
    // the db leaves: less than their three peaks, 900.
    let mut held = input.clone();
    held.contexts
        .iter_mut()
        .for_each(|c| (c.peak, c.in_turn) = (0, None));
    let p = plan(&held);
    assert!(waits(&p).is_empty(), "{:?}", p.actions);
    let shared: u64 = ["a", "b", "c"].map(|k| target(&p, &held, k)).iter().sum();
    assert_eq!(shared, 780 * MIB);
}

#[test]
fn a_peak_larger_than_the_room_is_waited_for_only_as_far_as_it_can_be_had() {
    let input = PlanInput {
        capacity: 500 * MIB,
        contexts: vec![
            ctx("db", Class::Critical, State::Active, 200, 200),
            queued(job("big", 20, 2000), 0, false),
        ],
    };
    let p = plan(&input);
    // 500 - 220 = 280: all of it, not a wait for 2000 MiB.
    assert!(waits(&p).is_empty(), "{:?}", p.actions);
    assert_eq!(target(&p, &input, "big"), 280 * MIB);
}

#[test]
fn jobs_whose_peaks_are_not_known_yet_run_in_turn_the_newest_waiting() {
    let begun = |mut c: ContextInput, at: u64| {
        c.in_turn = Some(Duration::from_secs(at));
        c
    };
    let input = PlanInput {
        capacity: 1000 * MIB,
        contexts: vec![
            ctx("db", Class::Critical, State::Active, 200, 200),
            // Growing, no peak known: what each holds is what it needs.
            begun(job("old", 300, 0), 1),
            begun(job("new", 300, 0), 3),
            begun(job("mid", 300, 0), 2),
        ],
    };
    let p = plan(&input);
    // 684 MiB beyond the floors: old and mid (268 more each) fit, 148
    // left: the newest waits, at its floor.
    assert_eq!(waits(&p), vec!["new"]);
    assert_eq!(target(&p, &input, "new"), 32 * MIB);
    assert!(target(&p, &input, "old") >= 300 * MIB);
    assert!(target(&p, &input, "mid") >= 300 * MIB);
    assert!(p.targets.iter().sum::<u64>() <= input.capacity);
}

#[test]
fn a_job_between_two_stretches_keeps_no_room_ahead_of_the_queue_and_never_waits() {
    let begun = |mut c: ContextInput, at: u64| {
        c.in_turn = Some(Duration::from_secs(at));
        c
    };
    let plan_at = |capacity_mib: u64| {
        let input = PlanInput {
            capacity: capacity_mib * MIB,
            contexts: vec![
                ctx("db", Class::Critical, State::Active, 200, 200),
                begun(job("runs", 300, 300), 0),
                // Re-touched its heap and sleeps: active, quiet, its
                // stretch begun before the queued one's.
                ContextInput {
                    quiet: true,
                    ..begun(job("sleeps", 300, 300), 1)
                },
                queued(begun(job("woke", 40, 300), 2), 2, false),
            ],
        };
        let p = plan(&input);
        assert!(p.targets.iter().sum::<u64>() <= input.capacity);
        (waits(&p).join(","), target(&p, &input, "woke"))
    };
    // 1000 - 220 (db) - 3 x 32 (floors) = 684: "runs" keeps room for its
    // peak (268 more), the queued wake is let in for its own (268) ahead of
    // the sleeping one, which shares the 148 left.
    let (waiting, woke) = plan_at(1000);
    assert_eq!(waiting, "");
    assert!(woke >= 300 * MIB, "{woke}");
    // 384 beyond the floors: the wake waits; the sleeper is not frozen.
    assert_eq!(plan_at(700).0, "woke");
}
