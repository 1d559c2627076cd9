//! The state machine's use of what a context's processes touched
//! (`crate::touch`): calls told from rests by the pages they touched.

use super::tests::reading;
use super::*;
use crate::touch::Touch;

const MIB: u64 = 1 << 20;

/// What bench/faas' handler touched (64 MiB held): its rest's interpreter
/// pages, or a call's whole heap.
fn touched(mib: u64) -> Option<Touch> {
    Some(Touch {
        referenced: mib * MIB,
        resident: 64 * MIB,
    })
}

const RESIDENT: Known = Known {
    expected: false,
    resident: true,
    polled: false,
};

fn idle_from_1s() -> ModelParams {
    ModelParams {
        idle_after: Duration::from_secs(1),
        ..Default::default()
    }
}

/// Idle from 1 s, its rest learned with its pages in over 20 s of ticks
/// (0.25 ms a second, the handler's), asked nothing on the way but once
/// (when it came to rest); returns the model and the CPU so far (µs).
fn resting_resident(p: &ModelParams) -> (ContextModel, u64) {
    let mut m = ContextModel::new(Duration::ZERO);
    let mut cpu = 0;
    let mut asks = 0;
    for k in 0..=21u64 {
        cpu += 250;
        m.observe_asking(reading(k, cpu), p, Via::Tick, RESIDENT, &mut || {
            asks += 1;
            touched(2)
        });
    }
    assert_eq!(m.state, State::Idle);
    assert_eq!(asks, 1, "asked once, as it came to rest");
    (m, cpu)
}

/// A resting function with its pages in takes bursts of CPU the size of
/// a call with no call (bench/faas: more than half of a run's warm calls
/// one afternoon): taken for a call only if it touched as one.
#[test]
fn a_warm_call_is_one_only_if_it_touched_as_one() {
    let p = idle_from_1s();
    let (mut m, mut cpu) = resting_resident(&p);
    let allowance = m.rest_allowance(Duration::from_secs(1));
    cpu += 3_000; // a burst: 3 ms, its interpreter's pages only
    let burst = m.observe_asking(reading(22, cpu), &p, Via::Tick, RESIDENT, &mut || {
        touched(2)
    });
    assert_eq!(burst, None);
    assert_eq!(m.history.count(), 0);
    assert_eq!(m.judged.and_then(|j| j.touched), touched(2));
    assert_eq!(
        m.rest_allowance(Duration::from_secs(1)),
        allowance,
        "not its rest"
    );
    cpu += 3_000; // a call: 3 ms, its heap read
    let call = m.observe_asking(reading(23, cpu), &p, Via::Tick, RESIDENT, &mut || {
        touched(56)
    });
    assert_eq!(call, Some(Transition::WarmCall));
    assert_eq!(m.history.count(), 1);
    // Where the host cannot tell, the CPU decides as before.
    cpu += 3_000;
    let unknown = m.observe_asking(reading(24, cpu), &p, Via::Tick, RESIDENT, &mut || None);
    assert_eq!(unknown, Some(Transition::WarmCall));
}

/// A call that read a few pages back from the tier (major faults, the
/// capped parent's reclaim took them) is a warm call; a reading with a
/// major fault is never learned as rest (bench/faas, session 48: a
/// timer's 3.5 ms call beyond its 1.6 ms allowance, no warm call for a
/// major fault, was learned and raised the allowance to 5.9 ms; its next
/// call, 1.9 ms, was judged rest against 3.3 ms, its period lost).
#[test]
fn a_call_that_read_pages_back_is_a_warm_call_and_no_rest() {
    let p = idle_from_1s();
    let (mut m, mut cpu) = resting_resident(&p);
    let faulted = |k: u64, cpu: u64, major: u64| Counters {
        pgfault: major,
        pgmajfault: major,
        ..reading(k, cpu)
    };
    let allowance = m.rest_allowance(Duration::from_secs(1));
    cpu += 3_500;
    let call = m.observe_asking(faulted(22, cpu, 3), &p, Via::Tick, RESIDENT, &mut || None);
    assert_eq!(call, Some(Transition::WarmCall), "3 major faults");
    assert_eq!(m.judged.map(|j| j.major_faults), Some(3));
    // Within the allowance but twice its rest's busiest second, with a
    // major fault: learned, it would raise the allowance.
    cpu += 1_100;
    let rest = m.observe_asking(faulted(23, cpu, 4), &p, Via::Tick, RESIDENT, &mut || None);
    assert_eq!(rest, None);
    assert_eq!(
        m.rest_allowance(Duration::from_secs(1)),
        allowance,
        "not its rest"
    );
    // Paging in: more faults than a warm call takes is no warm call.
    cpu += 3_500;
    let many = rest::WARM_CALL_MAJOR_FAULTS + 1;
    let paging = m.observe_asking(
        faulted(24, cpu, 4 + many),
        &p,
        Via::Tick,
        RESIDENT,
        &mut || None,
    );
    assert_eq!(paging, None);
    assert_eq!(m.history.count(), 1);
}

/// Held for a predicted call, its poll is judged over its own 20 ms: a
/// runtime's burst there was taken for the call 1-5 s early (bench/faas,
/// 5-10 a run), and the call then went unseen. With its pages in, a burst
/// that touched nothing is no wake; the call that touches its heap is.
#[test]
fn a_held_contexts_burst_that_touched_nothing_is_no_wake() {
    let p = idle_from_1s();
    let held = Known {
        expected: true,
        resident: true,
        polled: false,
    };
    let ms = Duration::from_millis;
    let (mut m, cpu) = resting_resident(&p);
    let base = Duration::from_micros(cpu);
    assert_eq!(
        m.poll_asking(ms(21_020), base, &p, held, &mut || touched(2)),
        None
    );
    assert_eq!(
        m.poll_asking(ms(21_040), base + ms(2), &p, held, &mut || touched(2)),
        None,
        "2 ms that touched 2 MiB"
    );
    assert_eq!(m.state, State::Idle);
    assert_eq!(m.history.count(), 0);
    // Judged from the burst on: the call's 4 ms, its heap touched; within
    // `ASK_GAP` of the burst's ask it waits, unjudged, for a later poll.
    let mut never = || -> Option<Touch> { panic!("asked within the gap") };
    assert_eq!(
        m.poll_asking(ms(21_060), base + ms(4), &p, held, &mut never),
        None
    );
    assert_eq!(
        m.poll_asking(ms(21_140), base + ms(6), &p, held, &mut || touched(40)),
        Some(Transition::Woke)
    );
    // Its pages out, a call faults: nothing is asked, CPU says it.
    let (mut m, cpu) = resting_resident(&p);
    let out = Known {
        expected: true,
        resident: false,
        polled: false,
    };
    let base = Duration::from_micros(cpu);
    let mut never = || -> Option<Touch> { panic!("asked with its pages out") };
    assert_eq!(m.poll_asking(ms(21_020), base, &p, out, &mut never), None);
    assert_eq!(
        m.poll_asking(ms(21_040), base + ms(2), &p, out, &mut never),
        Some(Transition::Woke)
    );
}

/// What a call touched after it was asked must not confirm the next
/// burst: the first resting reading after a call asks again (the count
/// starts there), and only that one.
#[test]
fn after_a_call_the_count_starts_again_at_rest() {
    let p = idle_from_1s();
    let (mut m, mut cpu) = resting_resident(&p);
    cpu += 3_000;
    let call = m.observe_asking(reading(22, cpu), &p, Via::Tick, RESIDENT, &mut || {
        touched(56)
    });
    assert_eq!(call, Some(Transition::WarmCall));
    let mut asks = 0;
    for k in 23..=26 {
        cpu += 250;
        let r = m.observe_asking(reading(k, cpu), &p, Via::Tick, RESIDENT, &mut || {
            asks += 1;
            touched(20)
        });
        assert_eq!(r, None);
    }
    assert_eq!(asks, 1, "once, at the first reading at rest");
}
