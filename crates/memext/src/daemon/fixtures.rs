//! Tests' fake cgroup trees: a copy of one of memext-cgroup's checked-in
//! fixtures, in a temporary directory the test may write.

use std::path::Path;

/// A writable copy of fixture `v` (`v1`, `v2`, ...), removed when dropped.
pub fn copied(v: &str) -> tempfile::TempDir {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../memext-cgroup/fixtures")
        .join(v);
    let dst = tempfile::tempdir().expect("tempdir");
    let status = std::process::Command::new("cp")
        .arg("-r")
        .arg(format!("{}/.", src.display()))
        .arg(dst.path())
        .status();
    assert!(status.expect("cp").success());
    dst
}
