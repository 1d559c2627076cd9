//! The count of charges that met a cgroup's limit, as this host's kernel
//! keeps it (v1 `memory.failcnt`): what the daemon's metrics report for its
//! capacity cgroup (`memext_capacity_limit_hits_total`). A reader of a file
//! larger than the cgroup's limit charges its page cache there, and past
//! the limit each charge meets it and the kernel reclaims the clean cache
//! (no swap area needed); a reader of a smaller file leaves the count as it
//! was. The daemon, its capacity that cgroup's limit, reports the count in
//! its metrics. Needs root; the cgroups, files and the daemon are removed
//! on drop, also on failure.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::Command;

use memext_cgroup::{AnyCgroup, Limit, LimitKnob, MemoryCgroup};
use memext_e2e::sandbox::{ChildGuard, TierSandbox};
use memext_e2e::{host_hierarchy, ScratchCgroup};

mod common;
use common::*;

const MIB: u64 = 1 << 20;

/// A file of `mib` MiB on the disk (not tmpfs: its cache must be
/// reclaimable without swap), written and dropped from the page cache
/// (`dd iflag=nocache`); removed on drop.
struct ColdFile(PathBuf);

impl ColdFile {
    fn new(name: &str, mib: u64) -> Self {
        let f = Self(PathBuf::from(format!(
            "/var/tmp/memext-e2e-{}-{name}",
            std::process::id()
        )));
        let bytes = usize::try_from(mib * MIB).expect("size");
        std::fs::write(&f.0, vec![7u8; bytes]).expect("write");
        let synced = std::fs::File::open(&f.0).and_then(|h| h.sync_all());
        synced.expect("fsync");
        let dropped = Command::new("dd")
            .arg(format!("if={}", f.0.display()))
            .args(["iflag=nocache", "count=0", "status=none"])
            .status()
            .expect("dd");
        assert!(
            dropped.success(),
            "dropping {} from the cache",
            f.0.display()
        );
        f
    }
}

impl Drop for ColdFile {
    fn drop(&mut self) {
        std::fs::remove_file(&self.0).ok();
    }
}

/// Reads `file` from a shell that first moves itself into `cg`.
fn read_in(cg: &ScratchCgroup, file: &ColdFile) {
    let procs = format!("/sys/fs/cgroup/memory{}/cgroup.procs", cg.path);
    let status = Command::new("sh")
        .args([
            "-c",
            "echo $$ > \"$0\" && exec cat \"$1\" > /dev/null",
            &procs,
        ])
        .arg(&file.0)
        .status()
        .expect("sh");
    assert!(
        status.success(),
        "reading {} in {}",
        file.0.display(),
        cg.path
    );
}

/// A scratch cgroup `label` held at a 32 MiB limit.
fn capped(label: &str) -> (ScratchCgroup, AnyCgroup) {
    let h = host_hierarchy().expect("hierarchy");
    let cg = ScratchCgroup::new(&h, label).expect("cgroup");
    let c = cg.open().expect("open");
    c.write_limit(LimitKnob::V1Limit, Limit::Bytes(32 * MIB))
        .expect("limit");
    (cg, c)
}

#[test]
fn charges_that_meet_a_limit_are_counted_and_those_within_it_are_not() {
    let _g = serial();
    let (cg, c) = capped("capped");
    assert_eq!(c.limit_hits().expect("failcnt"), 0, "a new cgroup");

    read_in(&cg, &ColdFile::new("small", 8));
    let within = c.limit_hits().expect("failcnt");
    assert_eq!(within, 0, "8 MiB of cache under a 32 MiB limit");

    read_in(&cg, &ColdFile::new("large", 96));
    let past = c.limit_hits().expect("failcnt");
    assert!(
        past > 0,
        "96 MiB of cache read under a 32 MiB limit: {past} hits"
    );
    let usage = c.memory().expect("memory").usage_bytes;
    assert!(usage <= 32 * MIB, "held at the limit: {usage}");
}

/// `memext_capacity_limit_hits_total` in the daemon's metrics at `addr`
/// (None: not served, or not reported yet).
fn hits_reported(addr: &str) -> Option<u64> {
    let mut c = TcpStream::connect(addr).ok()?;
    c.write_all(b"GET /metrics HTTP/1.0\r\n\r\n").ok()?;
    let mut text = String::new();
    c.read_to_string(&mut text).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("memext_capacity_limit_hits_total "))
        .and_then(|v| v.trim().parse().ok())
}

#[test]
fn the_daemon_reports_the_charges_that_met_its_capacity_cgroups_limit() {
    let _g = serial();
    let (cg, c) = capped("capacity");
    let toml = format!(
        "[[select]]\ncgroup = \"{0}/*\"\nclass = \"extend\"\n\n[daemon]\ncapacity_cgroup = \"{0}\"\n\
         tick = \"200ms\"\npoll = \"20ms\"\nsocket = \"@DIR@/memext.sock\"\n",
        cg.path
    );
    let sb = TierSandbox::new("limithits", &toml);
    // A port the kernel just gave out and took back: free for the daemon.
    let addr = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .to_string();
    let log = std::fs::File::create(sb.dir.join("daemon.log")).expect("log");
    let _daemon = ChildGuard(
        sb.command(&["--log-format", "json", "daemon", "--metrics-addr", &addr])
            .stdout(std::process::Stdio::null())
            .stderr(log)
            .spawn()
            .expect("memext daemon"),
    );
    wait_for("the daemon to report no charge at its limit", 20, || {
        hits_reported(&addr) == Some(0)
    });
    read_in(&cg, &ColdFile::new("metered", 96));
    let hits = c.limit_hits().expect("failcnt");
    assert!(hits > 0, "96 MiB of cache under a 32 MiB limit");
    wait_for("the daemon to report the charges at its limit", 10, || {
        hits_reported(&addr) == Some(hits)
    });
}
