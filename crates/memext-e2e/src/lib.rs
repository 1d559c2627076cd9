//! Shared pieces of memext's end-to-end tests, which need root, real cgroups
//! and swap: a child process that allocates and touches memory on command, a
//! scratch cgroup that is removed however the test ends, and the page-out /
//! bring-back scenario that runs both on this host (v1) and inside the
//! cgroup-v2 VM. Everything here cleans up after itself in `Drop`.
#![forbid(unsafe_code)]

pub mod coldcall;
pub mod docker;
pub mod kbench;
pub mod redisload;
pub mod sandbox;
pub mod scenario;
pub mod toucher;
pub mod v2suite;

use std::sync::atomic::{AtomicU32, Ordering};

use anyhow::Context;
use memext_cgroup::{AnyCgroup, CgroupPath, Hierarchy};

/// A cgroup made for one test under a name of its own, removed on drop
/// (after the processes in it, which must be the test's own, have exited).
pub struct ScratchCgroup {
    pub hierarchy: Hierarchy,
    pub parent: CgroupPath,
    pub path: CgroupPath,
}

static SEQ: AtomicU32 = AtomicU32::new(0);

impl ScratchCgroup {
    pub fn new(hierarchy: &Hierarchy, label: &str) -> anyhow::Result<Self> {
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let parent = CgroupPath::parse(&format!("/memext-e2e-{}-{n}", std::process::id()))?;
        let path = parent.child(label)?;
        let s = Self {
            hierarchy: hierarchy.clone(),
            parent,
            path,
        };
        s.hierarchy
            .create(&s.path)
            .with_context(|| format!("creating cgroup {}", s.path))?;
        Ok(s)
    }

    pub fn open(&self) -> anyhow::Result<AnyCgroup> {
        Ok(self.hierarchy.open(&self.path)?)
    }

    pub fn attach(&self, pid: u32) -> anyhow::Result<()> {
        Ok(self.hierarchy.attach(&self.path, pid)?)
    }
}

impl Drop for ScratchCgroup {
    fn drop(&mut self) {
        remove_cgroups(&self.hierarchy, &[self.path.clone(), self.parent.clone()]);
    }
}

/// Removes `paths` in order (deepest first), each retried for up to 5 s:
/// rmdir fails while a dying process is still charged to the cgroup.
pub fn remove_cgroups(h: &Hierarchy, paths: &[CgroupPath]) {
    for p in paths {
        let mut tries = 0;
        while h.remove(p).is_err() {
            tries += 1;
            if tries == 50 {
                eprintln!("memext-e2e: could not remove cgroup {p}");
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

/// The cgroup hierarchy of this machine (or of `CGROUP_ROOT` when set).
pub fn host_hierarchy() -> anyhow::Result<Hierarchy> {
    let root = std::env::var("CGROUP_ROOT").unwrap_or_else(|_| Hierarchy::DEFAULT_ROOT.into());
    Ok(Hierarchy::probe(std::path::Path::new(&root))?)
}

/// The object for cgroup `cgroup` in the output of `memext status --json`.
pub fn status_row(json: &str, cgroup: &str) -> anyhow::Result<serde_json::Value> {
    let rows: Vec<serde_json::Value> =
        serde_json::from_str(json).context("memext status --json is not a JSON array")?;
    rows.into_iter()
        .find(|r| r["cgroup"] == cgroup)
        .with_context(|| format!("{cgroup} is not in the status output: {json}"))
}

/// The structured events named `event` in a daemon log written with
/// `--log-format json` (lines that are not JSON objects are skipped).
pub fn events_named(log: &std::path::Path, event: &str) -> Vec<serde_json::Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["event"] == event)
        .collect()
}

/// The last `n` lines of a daemon's log, for a failed test's message: what
/// it saw and decided just before.
pub fn log_tail(log: &std::path::Path, n: usize) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}
