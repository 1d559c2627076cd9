//! A critical context keeps its anonymous memory when the cap above it
//! reclaims (v1, this host's real cgroups and a real swap file): a parent
//! capped at 160 MiB holds a critical context's 96 MiB and an unmanaged
//! neighbour that fills 128 MiB after it. With `keep_anon` (the critical
//! class's default) the daemon sets the critical context's
//! `memory.swappiness` to 0 and the cap's reclaim takes the neighbour's pages;
//! with it off the same fill swaps out the critical context's, the older
//! ones. SIGTERM puts the swappiness back. A critical context under a limit
//! of its own keeps its swappiness. Needs root; everything is removed on
//! drop, also on failure.

use memext_cgroup::{Limit, LimitKnob, MemoryCgroup};
use memext_e2e::sandbox::{ChildGuard, TierSandbox};
use memext_e2e::toucher::Toucher;
use memext_e2e::{host_hierarchy, status_row, ScratchCgroup};

mod common;
use common::*;

const MIB: u64 = 1 << 20;

/// A toucher holding `mib` MiB in the critical cgroup, and the daemon,
/// once it tracks that context.
fn tracked_critical(cg: &ScratchCgroup, sb: &TierSandbox, mib: usize) -> (Toucher, ChildGuard) {
    let mut t = Toucher::spawn(helper(), mib << 20).expect("toucher");
    cg.attach(t.pid()).expect("attach");
    t.alloc().expect("alloc");
    let daemon = sb.daemon("daemon.log");
    wait_for("the daemon to track the critical context", 20, || {
        let out = sb.run(&["status", "--json"]);
        status_row(&String::from_utf8_lossy(&out.stdout), cg.path.as_str()).is_ok()
    });
    (t, daemon)
}

/// Bytes of the critical context's memory in swap after the neighbour's
/// fill, with the critical class's `keep_anon` as given; checks on the way
/// that the daemon wrote (or left) its swappiness and put it back on SIGTERM.
fn critical_swapped_by_the_cap(keep_anon: bool) -> u64 {
    let h = host_hierarchy().expect("hierarchy");
    let cg = ScratchCgroup::new(&h, "critical").expect("cgroup");
    let neighbour = Sibling::new(&cg, "neighbour"); // unmanaged
    h.open(&cg.parent)
        .expect("parent")
        .write_limit(LimitKnob::V1Limit, Limit::Bytes(160 * MIB))
        .expect("the parent's cap");
    let toml = format!(
        "[[select]]\ncgroup = \"{}\"\nclass = \"critical\"\n\n[class.critical]\nkeep_anon = {keep_anon}\n\n\
         [daemon]\ncapacity = \"4GiB\"\ntick = \"500ms\"\nsocket = \"@DIR@/memext.sock\"\n\n\
         [[tiers.swapfile]]\npath = \"@DIR@/swap0\"\nsize = \"512MiB\"\npriority = 10\n",
        cg.path
    );
    let sb = TierSandbox::new(&format!("keepanon-{keep_anon}"), &toml);
    sb.up();
    let c = cg.open().expect("open");
    let before = c.read_limit(LimitKnob::V1Swappiness).expect("swappiness");
    assert_ne!(before, Limit::Bytes(0), "a new cgroup's swappiness");

    let (critical, mut daemon) = tracked_critical(&cg, &sb, 96);
    if keep_anon {
        wait_for("memext to set the critical swappiness to 0", 20, || {
            c.read_limit(LimitKnob::V1Swappiness).ok() == Some(Limit::Bytes(0))
        });
    }
    let mut fill = Toucher::spawn(helper(), 128 << 20).expect("toucher");
    h.attach(&neighbour.path, fill.pid()).expect("attach");
    fill.alloc().expect("the neighbour's fill");
    let swapped = c.memory().expect("memory.stat").swap_bytes;
    let neighbour_swapped = h
        .open(&neighbour.path)
        .and_then(|n| n.memory())
        .expect("memory.stat")
        .swap_bytes;
    assert!(
        swapped + neighbour_swapped >= 48 * MIB,
        "the cap must have reclaimed: critical {swapped}, neighbour {neighbour_swapped} bytes in swap"
    );
    assert!(daemon.terminate(20).expect("exits").success());
    assert_eq!(
        c.read_limit(LimitKnob::V1Swappiness).expect("swappiness"),
        before,
        "the daemon puts the swappiness back"
    );
    drop(fill);
    drop(critical);
    swapped
}

#[test]
fn a_critical_context_keeps_its_anonymous_memory_when_the_cap_above_it_reclaims() {
    let _g = serial();
    let kept = critical_swapped_by_the_cap(true);
    let let_go = critical_swapped_by_the_cap(false);
    eprintln!("critical bytes in swap: {kept} with keep_anon, {let_go} without");
    assert!(kept < 4 * MIB, "with keep_anon: {kept} bytes in swap");
    assert!(
        let_go >= 32 * MIB,
        "without, the same fill must take the critical context's pages ({let_go} bytes in swap), or this test proves nothing"
    );
}

/// Under a limit of its own (the operator's) no anonymous page of a
/// swappiness-0 context could go, and that limit's reclaim would end in the
/// OOM killer: the daemon leaves such a context's swappiness as it is,
/// writes 0 once the limit is gone, and puts the original back when one
/// comes again.
#[test]
fn a_critical_context_under_a_limit_of_its_own_keeps_its_swappiness() {
    let _g = serial();
    let h = host_hierarchy().expect("hierarchy");
    let cg = ScratchCgroup::new(&h, "critical").expect("cgroup");
    let c = cg.open().expect("open");
    c.write_limit(LimitKnob::V1Limit, Limit::Bytes(64 * MIB))
        .expect("its own limit");
    let before = c.read_limit(LimitKnob::V1Swappiness).expect("swappiness");
    assert_ne!(before, Limit::Bytes(0), "a new cgroup's swappiness");
    let toml = format!(
        "[[select]]\ncgroup = \"{}\"\nclass = \"critical\"\n\n\
         [daemon]\ncapacity = \"4GiB\"\ntick = \"500ms\"\nsocket = \"@DIR@/memext.sock\"\n",
        cg.path
    );
    let sb = TierSandbox::new("keepanon-limited", &toml);
    let (t, mut daemon) = tracked_critical(&cg, &sb, 16);
    std::thread::sleep(std::time::Duration::from_secs(2)); // four ticks
    assert_eq!(
        c.read_limit(LimitKnob::V1Swappiness).expect("swappiness"),
        before,
        "written under the context's own limit"
    );
    c.write_limit(LimitKnob::V1Limit, Limit::Max)
        .expect("the limit lifted");
    wait_for("memext to set the swappiness to 0", 20, || {
        c.read_limit(LimitKnob::V1Swappiness).ok() == Some(Limit::Bytes(0))
    });
    c.write_limit(LimitKnob::V1Limit, Limit::Bytes(64 * MIB))
        .expect("a limit again");
    wait_for("memext to put the swappiness back", 20, || {
        c.read_limit(LimitKnob::V1Swappiness).ok() == Some(before)
    });
    assert!(daemon.terminate(20).expect("exits").success());
    assert_eq!(
        c.read_limit(LimitKnob::V1Swappiness).expect("swappiness"),
        before
    );
    drop(t);
}
