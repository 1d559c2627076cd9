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
    assert!(!t.fresh(secs(0)), "never walked");
    t.watch_all(std::slice::from_ref(&sub));
    t.walked(secs(0));
    t.drain();
    assert!(t.fresh(secs(1)), "nothing changed");

    // A cgroup made below a watched directory: walk again.
    std::fs::create_dir(sub.join("c1")).expect("mkdir");
    t.drain();
    assert!(!t.fresh(secs(1)));
    t.watch_all(&[sub.clone(), sub.join("c1")]);
    t.walked(secs(2));
    assert!(t.fresh(secs(3)));

    // Removed: walk again.
    std::fs::remove_dir(sub.join("c1")).expect("rmdir");
    t.drain();
    assert!(!t.fresh(secs(3)));
    t.walked(secs(4));

    // Files (not cgroups) do not count; the rescan comes anyway, sooner
    // while a directory could not be watched.
    std::fs::write(sub.join("memory.limit_in_bytes"), "1").expect("write");
    t.drain();
    assert!(t.fresh(secs(5)));
    assert!(t.fresh(secs(4) + RESCAN), "every directory is watched");
    assert!(!t.fresh(secs(4) + RESCAN_WATCHED));
    t.watch_all(&[sub.clone(), sub.join("gone")]);
    t.walked(secs(4));
    assert!(!t.fresh(secs(4) + RESCAN), "one directory has no watch");
}

/// A cgroup removed and made again under the same name is a new directory:
/// it is watched anew, so that what is made below it is seen.
#[test]
fn a_directory_made_again_is_watched_again() {
    let root = tempfile::tempdir().expect("tempdir");
    let c1 = root.path().join("c1");
    std::fs::create_dir(&c1).expect("mkdir");
    let mut t = TreeWatch::new(root.path().into()).expect("inotify");
    t.watch_all(std::slice::from_ref(&c1));
    t.walked(secs(0));
    std::fs::remove_dir(&c1).expect("rmdir");
    std::fs::create_dir(&c1).expect("mkdir again");
    t.drain();
    t.watch_all(std::slice::from_ref(&c1));
    t.walked(secs(1));
    std::fs::create_dir(c1.join("child")).expect("mkdir below");
    t.drain();
    assert!(!t.fresh(secs(2)), "a cgroup made below the new c1 is seen");
}
