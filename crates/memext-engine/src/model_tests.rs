//! The state machine on traces of samples and polls.

use super::*;

/// A trace: (seconds, cpu ms so far).
fn run(model: &mut ContextModel, p: &ModelParams, trace: &[(f64, u64)]) -> Vec<(f64, Transition)> {
    trace
        .iter()
        .filter_map(|&(t, cpu)| {
            let c = Counters {
                at: Duration::from_secs_f64(t),
                cpu: Duration::from_millis(cpu),
                ..Default::default()
            };
            model.observe(c, p).map(|e| (t, e))
        })
        .collect()
}

#[test]
fn sleeps_then_wakes_then_settles() {
    let p = ModelParams {
        idle_after: Duration::from_secs(10),
        ..Default::default()
    };
    let mut m = ContextModel::new(Duration::ZERO);
    // Busy for 5 s (500 ms CPU per second), then quiet, then busy again at 30 s.
    let mut trace = vec![];
    let mut cpu = 0;
    for i in 0..=40 {
        let t = f64::from(i);
        if !(6..30).contains(&i) {
            cpu += 500;
        }
        trace.push((t, cpu));
    }
    let events = run(&mut m, &p, &trace);
    assert_eq!(
        events,
        vec![
            (15.0, Transition::BecameIdle),
            (30.0, Transition::Woke),
            (32.0, Transition::Settled)
        ]
    );
    assert_eq!(m.history.last(), Some(Duration::from_secs(30)));
    assert_eq!(m.state, State::Active);
}

#[test]
fn false_idles_lengthen_the_threshold_and_true_ones_shorten_it() {
    let p = ModelParams {
        idle_after: Duration::from_secs(3),
        settle: Duration::from_secs(1),
        ..Default::default()
    };
    let mut m = ContextModel::new(Duration::ZERO);
    let mut cpu = 0;
    let mut trace = Vec::new();
    for i in 0..=60 {
        if [10, 15, 40].contains(&i) {
            cpu += 500;
        }
        trace.push((f64::from(i), cpu));
    }
    let events = run(&mut m, &p, &trace);
    // Idle at 3, woke at 10 (slept 7 >= 3: true idle, scale stays 1);
    // settled 11, idle at 13, woke at 15 (slept 2 < 3: false, scale 2);
    // settled 16, now idle needs 6 s: at 21; woke at 40 (slept 19 >= 6:
    // true, scale back to 1); settled 41, idle again at 43.
    let idle_at: Vec<f64> = events
        .iter()
        .filter(|e| e.1 == Transition::BecameIdle)
        .map(|e| e.0)
        .collect();
    assert_eq!(idle_at, vec![3.0, 13.0, 21.0, 43.0]);
    assert_eq!(m.idle_scale, 1);
}

fn idle_after_10s() -> ModelParams {
    ModelParams {
        idle_after: Duration::from_secs(10),
        ..Default::default()
    }
}

/// A trace read at `readings` (s) whose reading at each of `called` saw
/// a call's 200 ms of CPU.
fn calls_at(readings: &[f64], called: &[f64]) -> Vec<(f64, u64)> {
    let mut cpu = 0;
    readings
        .iter()
        .map(|&t| {
            if called.contains(&t) {
                cpu += 200;
            }
            (t, cpu)
        })
        .collect()
}

/// A function called every 8 s, judged idle only after 10 s: it never
/// sleeps, but each call after a quiet stretch is an onset, recorded,
/// and its period is learned from them.
#[test]
fn calls_of_a_context_that_never_sleeps_are_onsets_in_its_history() {
    let p = idle_after_10s();
    let mut m = ContextModel::new(Duration::ZERO);
    let ticks: Vec<f64> = (0..=44).map(f64::from).collect();
    let trace = calls_at(&ticks, &[4.0, 12.0, 20.0, 28.0, 36.0, 44.0]);
    let events = run(&mut m, &p, &trace);
    let at = |t: &[f64]| {
        t.iter()
            .map(|&s| (s, Transition::Onset))
            .collect::<Vec<_>>()
    };
    assert_eq!(events, at(&[4.0, 12.0, 20.0, 28.0, 36.0, 44.0]));
    assert_eq!(m.state, State::Active);
    assert_eq!(m.history.period(), Some(Duration::from_secs(8)));
    assert!(m.had_onset(Duration::from_secs(45), Duration::from_secs(2)));
    // Busy without a pause: no onset.
    let mut busy = ContextModel::new(Duration::ZERO);
    let steady: Vec<(f64, u64)> = (0..=20u32)
        .map(|i| (f64::from(i), 500 * u64::from(i)))
        .collect();
    assert!(run(&mut busy, &p, &steady).is_empty());
}

/// Calls within `ONSET_QUIET` of the last activity have no onset: each
/// one after a tick without activity is a call in the history all the
/// same, while one call read over two ticks is one. Without them the
/// history held one wake per stretch (bench/faas: 105 of 535 calls).
#[test]
fn calls_in_one_stretch_of_activity_are_each_in_its_history() {
    let p = idle_after_10s();
    let mut m = ContextModel::new(Duration::ZERO);
    // Called at 4 (an onset), read active over two readings (4, 5), quiet
    // at 5.9, called again by 6.8 and by 8.6 (readings 0.9 s apart: never
    // `ONSET_QUIET` without activity).
    let readings = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 5.9, 6.8, 7.7, 8.6, 9.5];
    let trace = calls_at(&readings, &[4.0, 5.0, 6.8, 8.6]);
    let events = run(&mut m, &p, &trace);
    assert_eq!(
        events,
        vec![
            (4.0, Transition::Onset),
            (6.8, Transition::Call),
            (8.6, Transition::Call)
        ]
    );
    let wakes: Vec<Duration> = m.history.wakes().collect();
    assert_eq!(wakes, [4.0, 6.8, 8.6].map(Duration::from_secs_f64));
}

/// The reading that holds a wake seen between ticks is that wake's call,
/// and so is one that began before it: only a quiet reading after it makes
/// the next activity another call. A waking context's calls count too.
#[test]
fn the_reading_that_held_a_recorded_wake_is_not_another_call() {
    let p = ModelParams {
        idle_after: Duration::from_secs(2),
        settle: Duration::from_secs(5),
        ..Default::default()
    };
    let mut m = ContextModel::new(Duration::ZERO);
    let mut cpu = 0;
    for k in 0..=3u64 {
        m.observe(reading(k, cpu), &p);
    }
    assert_eq!(m.state, State::Idle);
    // Woken at 3.5 (a poll), its call read on at the ticks of 4 and 5.
    cpu += 50_000;
    let poll = m.poll(
        Duration::from_millis(3_500),
        Duration::from_micros(cpu),
        &p,
        Known::default(),
    );
    assert_eq!(poll, Some(Transition::Woke));
    let mut seen = Vec::new();
    for (k, call) in [(4, true), (5, true), (6, false), (7, true)] {
        if call {
            cpu += 50_000;
        }
        seen.push(m.observe(reading(k, cpu), &p));
    }
    assert_eq!(seen, [None, None, None, Some(Transition::Call)]);
    assert_eq!(
        m.state,
        State::Waking,
        "a call recorded while waking changes no state"
    );
    assert_eq!(m.history.count(), 2);
}

/// A periodic context whose call comes soon after it was judged idle,
/// on the schedule its history predicts, was truly idle: the threshold
/// stays; off its schedule, the same short sleep doubles it.
#[test]
fn a_wake_on_its_schedule_is_no_false_idle() {
    let p = ModelParams {
        idle_after: Duration::from_secs(10),
        settle: Duration::from_secs(1),
        ..Default::default()
    };
    // Called every 20 s; judged idle at 71, 10 s after the call at 61.
    for (wake, scale) in [(80, 1), (73, 2)] {
        let mut m = ContextModel::new(Duration::from_secs(60));
        for w in [0.0, 20.0, 40.0, 60.0] {
            m.history.record(Duration::from_secs_f64(w));
        }
        let mut cpu = 0;
        let mut trace = Vec::new();
        for i in 60..=82 {
            if i == 61 || i == wake {
                cpu += 200;
            }
            trace.push((f64::from(i), cpu));
        }
        let events = run(&mut m, &p, &trace);
        assert!(
            events.contains(&(f64::from(wake), Transition::Woke)),
            "{events:?}"
        );
        assert_eq!(m.idle_scale, scale, "wake at {wake}");
    }
}

#[test]
fn a_fresh_context_is_active_until_proven_idle() {
    let p = ModelParams {
        idle_after: Duration::from_secs(10),
        ..Default::default()
    };
    let mut m = ContextModel::new(Duration::ZERO);
    let events = run(&mut m, &p, &[(0.0, 0), (5.0, 0), (9.9, 0)]);
    assert!(events.is_empty());
    assert_eq!(m.state, State::Active);
    assert_eq!(
        run(&mut m, &p, &[(10.0, 0)]),
        vec![(10.0, Transition::BecameIdle)]
    );
}

#[test]
fn wake_is_seen_on_the_first_active_sample() {
    let p = ModelParams {
        idle_after: Duration::from_secs(1),
        ..Default::default()
    };
    let mut m = ContextModel::new(Duration::ZERO);
    run(&mut m, &p, &[(0.0, 0), (1.0, 0)]);
    assert_eq!(m.state, State::Idle);
    // Sampled every 20 ms: 6 ms of CPU in 20 ms is activity at once.
    assert_eq!(
        run(&mut m, &p, &[(1.02, 0), (1.04, 6)]),
        vec![(1.04, Transition::Woke)]
    );
}

/// Between ticks: a runtime's housekeeping (1 ms of CPU every 0.5 s,
/// read every 20 ms) is no wake; 6 ms of CPU is, at the poll that sees
/// it; the tick after a poll still judges its whole interval.
#[test]
fn polls_judge_cpu_over_a_quarter_second_at_least() {
    let p = ModelParams {
        idle_after: Duration::from_secs(1),
        ..Default::default()
    };
    let ms = Duration::from_millis;
    const EXPECTED: Known = Known {
        expected: true,
        resident: false,
        polled: false,
    };
    let mut m = ContextModel::new(Duration::ZERO);
    run(&mut m, &p, &[(0.0, 0), (1.0, 0)]);
    assert_eq!(m.state, State::Idle);
    let mut cpu = 0;
    for k in 1..=100u64 {
        if k % 25 == 0 {
            cpu += 1; // one housekeeping run every 0.5 s
        }
        let at = Duration::from_secs(1) + ms(20 * k);
        assert_eq!(m.poll(at, ms(cpu), &p, Known::default()), None, "poll {k}");
    }
    // The tick at 3 s: 4 ms of CPU over 2 s, no wake either.
    assert!(run(&mut m, &p, &[(3.0, cpu)]).is_empty());
    assert_eq!(m.poll(ms(3020), ms(cpu + 3), &p, Known::default()), None);
    assert_eq!(
        m.poll(ms(3040), ms(cpu + 6), &p, Known::default()),
        Some(Transition::Woke),
        "6 ms of CPU within 40 ms"
    );
    assert_eq!(m.state, State::Waking);
    // What the wake was seen in, for the log: from the tick's reading on.
    let judged = Judged {
        cpu: ms(6),
        span: ms(40),
        faults: 0,
        major_faults: 0,
        expected: false,
        touched: None,
    };
    assert_eq!(m.judged, Some(judged));
    // Held for a predicted wake: 2 ms of CPU within a 20 ms poll is it.
    let mut h = ContextModel::new(Duration::ZERO);
    run(&mut h, &p, &[(0.0, 0), (1.0, 0)]);
    assert_eq!(h.poll(ms(1020), ms(0), &p, EXPECTED), None);
    assert_eq!(
        h.poll(ms(1040), ms(2), &p, EXPECTED),
        Some(Transition::Woke)
    );
    assert_eq!(h.judged.map(|j| (j.cpu, j.expected)), Some((ms(2), true)));
}

/// A kernel event on an idle context is its wake only if it took faults of
/// its own since the last reading: another context's swap-in reads ahead
/// into its slots and charges it (its event fires), while it took none
/// (`bench/scale/readahead.py`), or only its runtime's housekeeping
/// (bench/faas on the swap file, session 43).
#[test]
fn a_charge_the_context_did_not_take_is_no_wake() {
    let p = ModelParams {
        idle_after: Duration::from_secs(1),
        ..Default::default()
    };
    let own = Via::Fired { own: true };
    let at = |t: f64, cpu_ms: u64, pgfault: u64| Counters {
        at: Duration::from_secs_f64(t),
        cpu: Duration::from_millis(cpu_ms),
        pgfault,
        pgmajfault: 0,
    };
    let idle = || {
        let mut m = ContextModel::new(Duration::ZERO);
        m.observe(at(0.0, 0, 100), &p);
        m.observe(at(1.0, 0, 100), &p);
        assert_eq!(m.state, State::Idle);
        m
    };
    // (what, CPU ms, faults since the reading at 100, a wake?)
    let cases = [
        ("a neighbour's read-ahead: no fault, no CPU", 0, 0, false),
        (
            "its runtime's housekeeping meanwhile: a little CPU, 3 faults",
            1,
            3,
            false,
        ),
        ("its own first faults, its CPU not counted yet", 0, 40, true),
        ("a few faults, as a wake's first touches", 0, 8, true),
    ];
    for (what, cpu, faults, wake) in cases {
        let mut m = idle();
        let got = m.observe_via(at(5.0, cpu, 100 + faults), &p, own, Known::default());
        assert_eq!(got, wake.then_some(Transition::Woke), "{what}");
        let state = if wake { State::Waking } else { State::Idle };
        assert_eq!(m.state, state, "{what}");
        if wake {
            let judged = m.judged.map(|j| (j.cpu, j.faults));
            assert_eq!(judged, Some((Duration::from_millis(cpu), faults)), "{what}");
        }
    }
}

/// A tick's reading at `k` s, `cpu` µs of CPU so far.
pub(super) fn reading(k: u64, cpu: u64) -> Counters {
    Counters {
        at: Duration::from_secs(k),
        cpu: Duration::from_micros(cpu),
        ..Default::default()
    }
}
