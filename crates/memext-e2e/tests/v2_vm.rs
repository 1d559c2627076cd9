//! The cgroup-v2 end-to-end suite: builds memext and memext-e2e statically,
//! boots the throwaway v2 VM (scripts/cgroup2-vm) with them and runs
//! `memext-e2e v2-suite` as its payload. Part of the default suite: this
//! host's memory controller is v1, so this is where v2 is tested for real.

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root")
}

/// Builds the static binaries into target/static (a target dir of its own, so
/// this never waits on the build that runs the tests).
fn static_bins(ws: &Path) -> (PathBuf, PathBuf) {
    let target = ws.join("target/static");
    let status = Command::new(env!("CARGO"))
        .current_dir(ws)
        .env("RUSTFLAGS", "-C target-feature=+crt-static")
        .env("CARGO_TARGET_DIR", &target)
        .args([
            "build",
            "--locked",
            "--target",
            "x86_64-unknown-linux-gnu",
            "-p",
            "memext",
            "-p",
            "memext-e2e",
        ])
        .status()
        .expect("run cargo");
    assert!(status.success(), "static build failed");
    let dir = target.join("x86_64-unknown-linux-gnu/debug");
    (dir.join("memext"), dir.join("memext-e2e"))
}

#[test]
fn v2_suite_passes_in_a_real_cgroup_v2_kernel() {
    assert!(
        memext_e2e::is_root(),
        "the v2 VM suite needs root (apt-get for qemu, /dev/kvm)"
    );
    let ws = workspace();
    let (memext, payload) = static_bins(&ws);
    let out = Command::new(ws.join("scripts/cgroup2-vm"))
        .arg("--add")
        .arg(&memext)
        .arg(&payload)
        .arg("v2-suite")
        .output()
        .expect("run scripts/cgroup2-vm");
    let console = String::from_utf8_lossy(&out.stdout);
    let results: Vec<&str> = console
        .lines()
        .filter(|l| {
            l.starts_with("ok - ")
                || l.starts_with("FAIL - ")
                || l.starts_with("v2-suite:")
                || l.starts_with("vm:")
        })
        .collect();
    eprintln!("{}", results.join("\n"));
    assert!(
        out.status.success(),
        "v2 suite failed (exit {:?}):\n{}\n--- stderr ---\n{}",
        out.status.code(),
        console,
        String::from_utf8_lossy(&out.stderr)
    );
    let closing = results
        .iter()
        .find(|l| l.starts_with("v2-suite:"))
        .expect("closing line");
    assert!(
        closing.ends_with(" 0 failed") && !closing.contains(": 0 passed"),
        "{closing}"
    );
}
