//! The v2 suite's swap checks: the kernel behaviour the critical class's
//! `keep_anon` relies on (`memory.swap.max` 0 under a parent's cap), and a
//! Kubernetes pod's own swap limit (LimitedSwap) read and kept.

use std::path::Path;
use std::process::Command;

use anyhow::{ensure, Context};
use memext_cgroup::{Limit, LimitKnob, MemoryCgroup};

use super::memext_status_has;
use crate::toucher::Toucher;
use crate::{host_hierarchy, ScratchCgroup};

/// Cgroups a check made itself, removed however the check ends, in the
/// order given (deepest first).
struct Tree(memext_cgroup::Hierarchy, Vec<memext_cgroup::CgroupPath>);

impl Drop for Tree {
    fn drop(&mut self) {
        crate::remove_cgroups(&self.0, &self.1);
    }
}

/// The kernel behaviour the critical class's `keep_anon` relies on, on v2: a
/// child at `memory.swap.max` 0 keeps its 96 MiB of anonymous memory when its
/// parent's 160 MiB cap reclaims for a sibling's 128 MiB fill; at `max` the
/// same fill swaps it (else this check proves nothing).
pub(super) fn swap_max_keeps_anon(me: &Path) -> anyhow::Result<()> {
    let kept = swapped_by_the_cap(me, Limit::Bytes(0))?;
    let let_go = swapped_by_the_cap(me, Limit::Max)?;
    println!("  swap.max check: child bytes in swap: {kept} at swap.max 0, {let_go} at max");
    ensure!(kept < 4 << 20, "at swap.max 0: {kept} bytes in swap");
    ensure!(
        let_go >= 32 << 20,
        "at max the fill must take the child's pages too: {let_go} bytes in swap"
    );
    Ok(())
}

/// Bytes of a 96 MiB child's memory in swap after its sibling's fill under
/// their parent's 160 MiB cap, the child's `memory.swap.max` at `swap_max`.
fn swapped_by_the_cap(me: &Path, swap_max: Limit) -> anyhow::Result<u64> {
    let h = host_hierarchy()?;
    let cg = ScratchCgroup::new(&h, "kept")?;
    let sibling = cg.parent.child("sibling")?;
    h.create(&sibling)?;
    let _sibling = Tree(h.clone(), vec![sibling.clone()]);
    let parent = h.open(&cg.parent)?;
    parent.write_limit(LimitKnob::Max, Limit::Bytes(160 << 20))?;
    let c = cg.open()?;
    c.write_limit(LimitKnob::SwapMax, swap_max)?;
    let mut t = Toucher::spawn(me, 96 << 20)?;
    cg.attach(t.pid())?;
    t.alloc()?;
    let hits = parent.limit_hits()?;
    let mut fill = Toucher::spawn(me, 128 << 20)?;
    h.attach(&sibling, fill.pid())?;
    fill.alloc()?;
    // The daemon's metrics report this count for its capacity cgroup.
    let hits = parent.limit_hits()? - hits;
    ensure!(
        hits > 0,
        "the fill met the cap, and memory.events max did not count it"
    );
    let swapped = c.memory()?.swap_bytes;
    let sibling_swapped = h.open(&sibling)?.memory()?.swap_bytes;
    ensure!(
        swapped + sibling_swapped >= 48 << 20,
        "the cap must have reclaimed: child {swapped}, sibling {sibling_swapped} bytes in swap"
    );
    Ok(swapped)
}

/// A container in the kubelet's cgroupfs layout on v2 with a swap limit of
/// its own, as Kubernetes' LimitedSwap writes it: 64 MiB of anon, room for 16
/// MiB of it in swap. memext classifies it as a Kubernetes container, reads
/// the limit, and, idle with a floor of 8 MiB, keeps it at 48 MiB or more.
pub(super) fn limited_swap(me: &Path) -> anyhow::Result<()> {
    use crate::sandbox::{wait_for, ChildGuard};
    let memext = Path::new("/bin/memext");
    let h = host_hierarchy()?;
    let pod = memext_cgroup::CgroupPath::parse("/kubepods/burstable/pod0e2e")?;
    let path = pod.child(&"c0".repeat(32))?;
    let cg = h.create(&path)?;
    // Removed however the check ends, deepest first.
    let mut made = vec![path.clone()];
    for p in [
        "/kubepods/burstable/pod0e2e",
        "/kubepods/burstable",
        "/kubepods",
    ] {
        made.push(memext_cgroup::CgroupPath::parse(p)?);
    }
    let _tree = Tree(h.clone(), made);
    let mut t = Toucher::spawn(me, 64 << 20)?;
    h.attach(&path, t.pid())?;
    t.alloc()?;
    cg.write_limit(LimitKnob::SwapMax, Limit::Bytes(16 << 20))?;
    let m = cg.memory()?;
    ensure!(
        m.swap_max == Some(16 << 20),
        "swap.max read {:?}",
        m.swap_max
    );
    ensure!(
        m.anon_beyond_swap_limit() >= 44 << 20,
        "beyond the swap limit: {} bytes",
        m.anon_beyond_swap_limit()
    );
    let cfg = "/tmp/memext-kube.toml";
    std::fs::write(
        cfg,
        "[host]\nstate_dir = \"/tmp/memext-kube-state\"\n\n[[select]]\nruntime = \"kubernetes\"\nclass = \"extend\"\n\n\
         [class.extend]\nidle_after = \"2s\"\nfloor = \"8MiB\"\n\n\
         [daemon]\ncapacity = \"1GiB\"\ntick = \"500ms\"\nsocket = \"/tmp/memext-kube.sock\"\n",
    )?;
    let mut d = ChildGuard(
        Command::new(memext)
            .args(["--config", cfg, "daemon"])
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create("/tmp/daemon-kube.log")?)
            .spawn()?,
    );
    let log = || std::fs::read_to_string("/tmp/daemon-kube.log").unwrap_or_default();
    wait_for("it is tracked as a Kubernetes container, idle", 60, || {
        memext_status_has(memext, cfg, "\"runtime\":\"kubernetes\"")
            && memext_status_has(memext, cfg, "\"state\":\"idle\"")
    })
    .with_context(log)?;
    // A few ticks idle: whatever memext did, it left the pod in DRAM.
    std::thread::sleep(std::time::Duration::from_secs(5));
    let high = cg.read_limit(LimitKnob::High)?;
    ensure!(
        matches!(high, Limit::Max) || matches!(high, Limit::Bytes(b) if b >= 44 << 20),
        "memory.high {high} pushes it below what swap.max keeps in DRAM: {}",
        log()
    );
    let (res, total) = t.mapped()?;
    ensure!(
        res * 10 >= total * 6,
        "pushed out: {res} of {total} pages resident"
    );
    let st = d
        .terminate(60)
        .context("the daemon did not exit on SIGTERM")?;
    ensure!(st.success(), "daemon exit {st:?}: {}", log());
    ensure!(
        cg.read_limit(LimitKnob::High)? == Limit::Max,
        "memory.high not restored"
    );
    drop(t);
    Ok(())
}
