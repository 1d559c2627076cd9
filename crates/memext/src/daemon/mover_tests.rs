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
