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

/// Each queued job as (is a bring-back, its context).
fn kinds_and_keys(q: &[Job]) -> Vec<(bool, &str)> {
    q.iter()
        .map(|j| (matches!(j, Job::BringBack { .. }), j.key().as_str()))
        .collect()
}

#[test]
fn bring_backs_jump_the_queue_and_cancel_push_outs_of_the_same_context() {
    let mut q = Vec::new();
    enqueue(&mut q, po("a"));
    enqueue(&mut q, po("b"));
    enqueue(&mut q, bb("b"));
    enqueue(&mut q, bb("c"));
    let order = kinds_and_keys(&q);
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
    let order = kinds_and_keys(&q);
    assert_eq!(
        order,
        vec![(true, "d"), (false, "a"), (true, "b"), (true, "c")]
    );
}

#[test]
fn a_predicted_bring_back_gives_way_to_a_wake_and_a_wake_only_to_its_own_context() {
    let (tx, rx) = std::sync::mpsc::channel();
    let mut q = Vec::new();
    let a: ContextId = "a".into();
    assert!(!gives_way(&rx, &mut q, &a, false));
    // Push-outs and other predicted bring-backs wait for it.
    tx.send(po("b")).expect("the receiver is here");
    tx.send(predicted("c")).expect("the receiver is here");
    assert!(!gives_way(&rx, &mut q, &a, false));
    assert!(!gives_way(&rx, &mut q, &a, true));
    // Another context's wake: a predicted read-back pauses, a woken one not.
    tx.send(bb("d")).expect("the receiver is here");
    assert!(gives_way(&rx, &mut q, &a, false));
    assert!(!gives_way(&rx, &mut q, &a, true));
    assert_eq!(q.len(), 3, "what came meanwhile is queued");
    // A newer bring-back of its own context replaces either.
    tx.send(predicted("a")).expect("the receiver is here");
    assert!(gives_way(&rx, &mut q, &a, true));
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
