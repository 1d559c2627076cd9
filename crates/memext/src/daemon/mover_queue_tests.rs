use super::*;

/// A bring-back for a wake (urgent) or a predicted one.
fn bring(key: &str, urgent: bool) -> Job {
    Job::BringBack {
        key: key.into(),
        pids: vec![],
        order: vec![],
        bandwidth: 0,
        map_back: false,
        map_kept: false,
        from_the_end: false,
        urgent,
    }
}
fn bb(key: &str) -> Job {
    bring(key, true)
}
fn predicted(key: &str) -> Job {
    bring(key, false)
}
fn po(key: &str) -> Job {
    Job::PushOut {
        key: key.into(),
        pids: vec![],
        keep: HashSet::new(),
        bandwidth: 0,
    }
}

#[test]
fn bring_backs_jump_the_queue_and_cancel_push_outs_of_the_same_context() {
    let mut q = Vec::new();
    enqueue(&mut q, po("a"));
    enqueue(&mut q, po("b"));
    enqueue(&mut q, bb("b"));
    enqueue(&mut q, bb("c"));
    let order: Vec<(bool, &str)> = q
        .iter()
        .map(|j| (matches!(j, Job::BringBack { .. }), j.key().as_str()))
        .collect();
    assert_eq!(order, vec![(true, "b"), (true, "c"), (false, "a")]);
}

#[test]
fn a_predicted_bring_back_waits_for_the_push_outs_that_make_its_room() {
    let mut q = Vec::new();
    enqueue(&mut q, po("a"));
    enqueue(&mut q, po("b"));
    enqueue(&mut q, predicted("b"));
    enqueue(&mut q, predicted("c"));
    enqueue(&mut q, bb("d"));
    let order: Vec<(bool, &str)> = q
        .iter()
        .map(|j| (matches!(j, Job::BringBack { .. }), j.key().as_str()))
        .collect();
    assert_eq!(
        order,
        vec![(true, "d"), (false, "a"), (true, "b"), (true, "c")]
    );
}

#[test]
fn a_predicted_bring_back_gives_way_to_a_wake_and_a_wake_only_to_its_own_context() {
    let mut q = Queue::default();
    let a: ContextId = "a".into();
    assert!(!q.bring_back_gives_way(&a, false));
    // Push-outs and other predicted bring-backs wait for it.
    enqueue(&mut q.waiting, po("b"));
    enqueue(&mut q.waiting, predicted("c"));
    assert!(!q.bring_back_gives_way(&a, false));
    assert!(!q.bring_back_gives_way(&a, true));
    // Another context's wake, waiting or served: a predicted read-back
    // pauses, a woken one not.
    q.wakes_served = 1;
    assert!(q.bring_back_gives_way(&a, false));
    assert!(!q.bring_back_gives_way(&a, true));
    q.wakes_served = 0;
    enqueue(&mut q.waiting, bb("d"));
    assert!(q.bring_back_gives_way(&a, false));
    assert!(!q.bring_back_gives_way(&a, true));
    // A newer bring-back of its own context replaces either.
    enqueue(&mut q.waiting, predicted("a"));
    assert!(q.bring_back_gives_way(&a, true));
}

#[test]
fn a_paused_read_back_goes_on_after_the_wakes_before_the_rest() {
    let mut q = Vec::new();
    enqueue(&mut q, po("a"));
    enqueue(&mut q, predicted("b"));
    enqueue(&mut q, bb("c"));
    enqueue(&mut q, bb("d"));
    resume(&mut q, predicted("e"));
    let order: Vec<&str> = q.iter().map(|j| j.key().as_str()).collect();
    assert_eq!(order, vec!["c", "d", "e", "a", "b"]);
}

fn taken(q: &mut Queue, lane: Lane) -> Option<String> {
    q.next(lane).map(|j| j.key().as_str().to_string())
}

#[test]
fn two_wakes_are_served_at_once_and_the_rest_waits_for_both() {
    let mut q = Queue::default();
    for j in [po("a"), po("b"), bb("c"), bb("d")] {
        enqueue(&mut q.waiting, j);
    }
    assert_eq!(taken(&mut q, Lane::Wakes).as_deref(), Some("c"));
    assert_eq!(taken(&mut q, Lane::Any).as_deref(), Some("d"));
    assert_eq!(taken(&mut q, Lane::Any), None, "a wake is served");
    assert!(!q.finish(&"d".into(), true));
    assert_eq!(taken(&mut q, Lane::Any), None, "c's still is");
    assert_eq!(taken(&mut q, Lane::Wakes), None, "only wakes");
    assert!(!q.finish(&"c".into(), true));
    assert_eq!(taken(&mut q, Lane::Any).as_deref(), Some("a"));
    // A push-out under way stops for a wake, which the other lane serves.
    assert!(!q.push_out_gives_way(&"a".into()));
    enqueue(&mut q.waiting, bb("e"));
    assert!(q.push_out_gives_way(&"a".into()));
    assert_eq!(taken(&mut q, Lane::Wakes).as_deref(), Some("e"));
    assert!(q.push_out_gives_way(&"a".into()), "while it is served");
}

#[test]
fn a_context_is_moved_by_one_lane_at_a_time() {
    let mut q = Queue::default();
    enqueue(&mut q.waiting, bb("a"));
    assert_eq!(taken(&mut q, Lane::Any).as_deref(), Some("a"));
    // A newer bring-back of it waits for the one under way to give way.
    enqueue(&mut q.waiting, bb("a"));
    assert!(q.bring_back_gives_way(&"a".into(), true));
    assert_eq!(taken(&mut q, Lane::Wakes), None);
    assert!(q.finish(&"a".into(), true), "another of its jobs waits");
    assert_eq!(taken(&mut q, Lane::Wakes).as_deref(), Some("a"));
}
