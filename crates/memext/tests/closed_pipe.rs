//! A one-shot command whose reader has gone (`memext check-config | head`)
//! ends quietly, as a C tool does, instead of panicking on EPIPE.

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

#[test]
fn check_config_into_a_closed_pipe_ends_quietly() {
    let dir = std::env::temp_dir().join(format!("memext-pipe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let cfg = dir.join("memext.toml");
    std::fs::write(
        &cfg,
        "[[select]]\nname = \"redis*\"\nclass = \"critical\"\n",
    )
    .expect("config");
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader); // nobody reads: the first write meets a closed pipe
    let out = Command::new(env!("CARGO_BIN_EXE_memext"))
        .args(["check-config"])
        .arg(&cfg)
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .output()
        .expect("run memext");
    std::fs::remove_dir_all(&dir).ok();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(
        out.status.signal(),
        Some(SIGPIPE),
        "{:?}: {stderr}",
        out.status
    );
}

/// SIGPIPE's number on Linux.
const SIGPIPE: i32 = 13;
