//! `map_kept` live on this host's real cgroups (v1): a context called every
//! 10 s and left resident between its calls (a host meant to be full, no
//! tier: nothing of it is pushed out) is held for its predicted call, and
//! its heap's whole 2 MiB blocks are mapped as huge pages before the call
//! (a `mapped-kept` event, and AnonHugePages in its smaps_rollup). Reclaim's
//! scans clear the accessed bits of the pages they leave, and a call then
//! sets each again: 0.4 us a page on this host (docs/faas/HISTORY.md, session 51). About
//! a minute. Needs root.

use std::time::{Duration, Instant};

use memext_e2e::sandbox::TierSandbox;
use memext_e2e::toucher::Toucher;
use memext_e2e::{events_named, host_hierarchy, ScratchCgroup};

mod common;
use common::*;

const PERIOD: Duration = Duration::from_secs(10);
/// What the toucher holds: 32 blocks.
const HEAP: usize = 64 << 20;

/// The anonymous memory of `pid` mapped as huge pages, in KiB.
fn anon_huge_kib(pid: u32) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).expect("smaps_rollup");
    text.lines()
        .find_map(|l| l.strip_prefix("AnonHugePages:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("AnonHugePages")
}

#[test]
fn a_resident_context_held_for_its_predicted_call_has_its_whole_blocks_mapped() {
    let _g = serial();
    let h = host_hierarchy().expect("hierarchy");
    let cg = ScratchCgroup::new(&h, "mapkept").expect("cgroup");
    let sb = TierSandbox::new(
        "mapkept",
        &format!(
            "[[select]]\ncgroup = \"{}/*\"\nclass = \"extend\"\n\n[class.extend]\nidle_after = \"2s\"\n\
             push_out = \"when-needed\"\nmap_kept = true\n\n[daemon]\ncapacity = \"4GiB\"\ntick = \"500ms\"\n\
             poll = \"20ms\"\nsocket = \"@DIR@/memext.sock\"\n",
            cg.parent
        ),
    );
    let mut t = Toucher::spawn(helper(), HEAP).expect("toucher");
    cg.attach(t.pid()).expect("attach");
    t.alloc().expect("alloc");
    let before = anon_huge_kib(t.pid());
    let log = sb.dir.join("daemon.log");
    let mut daemon = sb.daemon("daemon.log");
    let t0 = Instant::now();
    for k in 1..=8u32 {
        while t0.elapsed() < PERIOD * k {
            std::thread::sleep(Duration::from_millis(5));
        }
        // A call: it reads its heap and runs past the activity threshold
        // (seen at the tick, whatever the touch took).
        t.touch().expect("touch");
        t.spin(50).expect("spin");
        if !events_named(&log, "mapped-kept").is_empty() {
            break;
        }
    }
    let text = || std::fs::read_to_string(&log).unwrap_or_default();
    let mapped = events_named(&log, "mapped-kept");
    let first = mapped
        .first()
        .unwrap_or_else(|| panic!("no mapped-kept:\n{}", text()));
    assert!(
        first["bytes"]
            .as_u64()
            .is_some_and(|b| b >= HEAP as u64 / 2),
        "{first}"
    );
    let huge = anon_huge_kib(t.pid());
    assert!(
        huge >= before + (HEAP as u64 >> 11),
        "AnonHugePages {before} kB before, {huge} kB after"
    );
    assert!(
        events_named(&log, "bringing-back")
            .iter()
            .any(|e| e["reason"] == "periodic" && e["map_kept"] == true),
        "{}",
        text()
    );
    assert!(daemon.terminate(20).expect("exits").success());
    drop(t);
}
