//! The event observer's discovery on a real directory tree (inotify works on
//! any file system): the tree is walked again only after a change below it,
//! or when the rescan is due. Its kernel wake events are tested on real
//! cgroups in memext-e2e (`wake_events_v1`) and in the cgroup-v2 VM.

use std::time::Duration;

use super::*;

fn secs(s: u64) -> Instant {
    Duration::from_secs(s)
}

#[test]
fn the_tree_is_walked_again_only_after_a_change_or_the_rescan() {
    let root = tempfile::tempdir().expect("tempdir");
    let sub = root.path().join("a");
    std::fs::create_dir(&sub).expect("mkdir");
    let mut t = TreeWatch::new(root.path().into()).expect("inotify");
    assert!(t.fresh(secs(0)).is_none(), "never walked");
    t.watch_all(std::slice::from_ref(&sub));
    t.walked(secs(0), Vec::new());
    t.drain();
    assert!(t.fresh(secs(1)).is_some(), "nothing changed");

    // A cgroup made below a watched directory: walk again.
    std::fs::create_dir(sub.join("c1")).expect("mkdir");
    t.drain();
    assert!(t.fresh(secs(1)).is_none());
    t.watch_all(&[sub.clone(), sub.join("c1")]);
    t.walked(secs(2), Vec::new());
    assert!(t.fresh(secs(3)).is_some());

    // Removed: walk again.
    std::fs::remove_dir(sub.join("c1")).expect("rmdir");
    t.drain();
    assert!(t.fresh(secs(3)).is_none());
    t.walked(secs(4), Vec::new());

    // Files (not cgroups) do not count; the rescan comes anyway.
    std::fs::write(sub.join("memory.limit_in_bytes"), "1").expect("write");
    t.drain();
    assert!(t.fresh(secs(5)).is_some());
    assert!(t.fresh(secs(4) + RESCAN).is_none());
}
