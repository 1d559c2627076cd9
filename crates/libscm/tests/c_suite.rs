//! The C test programs in tests/c, compiled against include/libscm.h and the
//! libscm.so that `cargo build` made, and run as a C program would use them.

use std::path::{Path, PathBuf};
use std::process::Command;

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"))
}

/// Compiles tests/c/`name`.c into `out` and returns the program's path.
fn compile(name: &str, out: &Path) -> PathBuf {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    let lib_dir = target_dir().join(profile);
    assert!(
        lib_dir.join("libscm.so").exists(),
        "{}/libscm.so is missing: run `cargo build -p libscm` first",
        lib_dir.display()
    );
    let exe = out.join(name);
    let status = Command::new("cc")
        .args(["-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(crate_dir.join("include"))
        .arg(crate_dir.join(format!("tests/c/{name}.c")))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", lib_dir.display()))
        .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
        .arg("-lscm")
        .arg("-lpthread")
        .status()
        .expect("run cc");
    assert!(status.success(), "cc failed on tests/c/{name}.c");
    exe
}

fn run(exe: &Path, args: &[&Path]) -> String {
    let output = Command::new(exe)
        .args(args)
        .output()
        .expect("run the C test");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{} failed ({}):\n{stdout}\n{}",
        exe.display(),
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

fn tmpfs_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("libscm-test")
        .tempdir_in("/dev/shm")
        .expect("a directory on /dev/shm (tmpfs)")
}

#[test]
fn c_api_behaves_and_refuses_bad_input() {
    let build = tempfile::tempdir().expect("build dir");
    let exe = compile("test_api", build.path());
    let (shm, disk) = (
        tmpfs_dir(),
        tempfile::tempdir_in(target_dir()).expect("dir on disk"),
    );
    let out = run(&exe, &[shm.path(), disk.path()]);
    assert!(out.contains("test_api: 0 failures"), "{out}");
}

#[test]
fn no_crash_at_any_persist_point_leaves_an_inconsistent_region() {
    let build = tempfile::tempdir().expect("build dir");
    let exe = compile("crash_sweep", build.path());
    let shm = tmpfs_dir();
    let out = run(&exe, &[Path::new("sweep"), shm.path(), Path::new("1000")]);
    println!("{out}");
    assert!(out.contains(" 0 inconsistent regions"), "{out}");
}

#[test]
fn calls_from_a_thread_exit_destructor_work() {
    let build = tempfile::tempdir().expect("build dir");
    let exe = compile("tls_exit", build.path());
    let shm = tmpfs_dir();
    let out = run(&exe, &[shm.path()]);
    assert!(out.contains("persist 0, free 0, alloc 0"), "{out}");
}
