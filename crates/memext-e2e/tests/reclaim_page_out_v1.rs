//! The reclaimer's lowering on this host's real cgroups (v1) with a real swap
//! file: with `page_out_first` the context's memory is paged out with
//! `process_madvise` before the limit steps down, so that the limit writes
//! find little left to reclaim; without, or for a context that is not
//! resting (the job's `page_out` false), the limit writes reclaim it all.
//! Needs root; everything is removed on drop, also on failure.

use std::time::Duration;

use memext::daemon::reclaim::{Ended, Job, Reclaimer};
use memext_cgroup::{Limit, LimitKnob, MemoryCgroup};
use memext_e2e::host_hierarchy;

mod common;
use common::*;

const MIB: u64 = 1 << 20;

/// Lowers the context's limit from its usage to 16 MiB (`resting`: the
/// job's `page_out`); how it ended, and how many of its buffer's pages were
/// still mapped after.
fn lower(page_out_first: bool, resting: bool) -> (Ended, u64, u64) {
    let Setup { cg, sb: _sb, t, c } = setup("pageout", 128, Some("512MiB"));
    let usage = c.memory().expect("memory").usage_bytes;
    assert!(usage >= 128 * MIB, "the buffer is resident: {usage}");
    let from = usage.next_multiple_of(MIB);
    c.write_limit(LimitKnob::V1Limit, Limit::Bytes(from))
        .expect("limit");
    let r = Reclaimer::start(
        host_hierarchy().expect("hierarchy"),
        page_out_first,
        memext::daemon::wake_gate::WakeGate::default(),
    );
    r.submit(Job {
        id: cg.path.as_str().into(),
        path: cg.path.clone(),
        knob: LimitKnob::V1Limit,
        from,
        to: 16 * MIB,
        urgent: false,
        page_out: resting,
        yields: false,
        leave_at: 16 * MIB,
    });
    let mut ended = Vec::new();
    wait_for("the lowering to end", 60, || {
        ended.extend(r.take_ended());
        !ended.is_empty()
    });
    r.stop();
    std::thread::sleep(Duration::from_millis(100));
    let (resident, total) = mapped(&t);
    (ended.remove(0), resident, total)
}

#[test]
fn a_lowering_pages_the_memory_out_before_the_limit_steps_when_asked() {
    let _g = serial();
    let (e, resident, total) = lower(true, true);
    assert_eq!(
        (e.reached, e.stopped, e.error.as_deref()),
        (16 * MIB, false, None),
        "{e:?}"
    );
    assert!(e.paged_out >= 100 * MIB, "paged out first: {e:?}");
    assert!(
        resident * 5 <= total,
        "{resident} of {total} pages still mapped"
    );

    for (page_out_first, resting) in [(false, true), (true, false)] {
        let (e, resident, total) = lower(page_out_first, resting);
        assert_eq!((e.reached, e.error.as_deref()), (16 * MIB, None), "{e:?}");
        assert_eq!(
            e.paged_out, 0,
            "the limit writes reclaimed it (page-out {page_out_first}, resting {resting}): {e:?}"
        );
        assert!(
            resident * 5 <= total,
            "{resident} of {total} pages still mapped"
        );
    }
}
