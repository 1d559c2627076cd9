//! The fuzz targets of `fuzz/` (cargo-fuzz: the policy parser, the control
//! socket, the pmem broker's protocol, libscm opening corrupted regions) build,
//! and each survives a short run over its seeds and random inputs. Built on
//! stable here, so without coverage feedback: the real runs are
//! `cargo +nightly fuzz run TARGET` (README, "Fuzzing").

use std::path::{Path, PathBuf};
use std::process::Command;

use memext_e2e::sandbox::ScratchDir;

const TARGETS: [&str; 4] = ["policy", "control", "broker_protocol", "region"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn every_fuzz_target_builds_and_survives_a_short_run() {
    let root = root();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let built = Command::new(cargo)
        .args(["build", "--locked", "--manifest-path"])
        .arg(root.join("fuzz/Cargo.toml"))
        .status()
        .expect("cargo build of the fuzz targets");
    assert!(built.success(), "the fuzz targets do not build");
    let scratch = ScratchDir::new("fuzz");
    for t in TARGETS {
        // New inputs go to the first directory (scratch), never into the seeds.
        let corpus = scratch.0.join(t);
        std::fs::create_dir_all(&corpus).expect("corpus dir");
        let out = Command::new(root.join("fuzz/target/debug").join(t))
            .arg("-runs=20000")
            .arg("-max_len=4096")
            .arg(format!("-artifact_prefix={}/", scratch.0.display()))
            .arg(&corpus)
            .arg(root.join("fuzz/seeds").join(t))
            .output()
            .expect("run the fuzz target");
        assert!(
            out.status.success(),
            "fuzz target {t} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
