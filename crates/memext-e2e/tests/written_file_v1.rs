//! The mover's read-back on a real process and a real swap file: the pages a
//! process wrote of its private file mappings (its libraries' data and
//! relocations) are anonymous memory swapped as any other, but MADV_WILLNEED
//! on a file mapping reads the file ahead instead of them; the read-back
//! reads them through the process's page tables. A Python function of
//! bench/faas wrote some 370 such pages of libpython and took ~100 major
//! faults on them before its handler ran after a squeeze (docs/faas,
//! session 71). Needs root; a few seconds.

use std::time::{Duration, Instant};

use memext::daemon::mover::{Job, Mover};
use memext::daemon::priority::MovePriorities;
use memext::daemon::wake_gate::WakeGate;
use memext_e2e::sandbox::TierSandbox;
use memext_e2e::toucher::Toucher;
use memext_engine::ContextId;
use memext_sys::madvise::{advise, Advice};
use memext_sys::maps::{read_maps, Mapping};
use memext_sys::pagemap::{PageState, Pagemap};
use memext_sys::pidfd::ProcessHandle;

mod common;
use common::*;

/// The private file mappings of `pid`.
fn private_files(pid: u32) -> Vec<Mapping> {
    read_maps(pid)
        .expect("maps")
        .into_iter()
        .filter(Mapping::is_private_file)
        .collect()
}

/// Pages of the private file mappings of `pid` in swap.
fn swapped_file_pages(pid: u32) -> u64 {
    let mut pm = Pagemap::open(pid).expect("pagemap");
    let mut pages = 0;
    // One mapping at a time: a scan joins runs across adjacent mappings.
    for m in private_files(pid) {
        pages += pm
            .scan(m.range)
            .expect("scan")
            .iter()
            .filter(|r| r.state == PageState::Swapped)
            .map(|r| r.range.len() / memext_sys::page_size())
            .sum::<u64>();
    }
    pages
}

/// Pages out the private file mappings of a toucher, runs a read-back
/// (`urgent`: a wake's), and returns the pages paged out, those still in
/// swap after it, and the faults the mover handed on.
fn read_back_once(name: &str, urgent: bool) -> (u64, u64, u64) {
    let tiers = TierSandbox::new(
        name,
        "[[tiers.swapfile]]\npath = \"@DIR@/swap0\"\nsize = \"128MiB\"\npriority = 10\n",
    );
    tiers.up();
    let mut t = Toucher::spawn(helper(), 4 << 20).expect("toucher");
    t.alloc().expect("alloc");
    let pid = t.pid();
    let handle = ProcessHandle::open(pid).expect("pidfd");
    let ranges: Vec<_> = private_files(pid).iter().map(|m| m.range).collect();
    advise(&handle, &ranges, Advice::PageOut).expect("page out");
    let out = swapped_file_pages(pid);
    assert!(
        out > 0,
        "no page of the toucher's private file mappings went to swap"
    );
    let mover = Mover::start(WakeGate::default(), MovePriorities::default());
    let key = ContextId::new(name);
    mover.submit(Job::BringBack {
        key: key.clone(),
        pids: vec![pid],
        order: Vec::new(),
        bandwidth: 0,
        map_back: false,
        map_kept: false,
        from_the_end: false,
        urgent,
    });
    let t0 = Instant::now();
    while mover.is_busy(&key) {
        assert!(t0.elapsed() < Duration::from_secs(30), "read-back not done");
        std::thread::sleep(Duration::from_millis(10));
    }
    let left = swapped_file_pages(pid);
    let (faults, _) = mover.take_faults_caused(&key);
    mover.stop();
    // The process is whole: it still answers.
    t.touch().expect("touch");
    (out, left, faults)
}

#[test]
fn a_read_back_brings_the_written_pages_of_private_file_mappings_back() {
    let _g = serial();
    // A predicted call's read-back.
    let (out, left, faults) = read_back_once("writtenfile", false);
    assert_eq!(
        left, 0,
        "{left} of the {out} written pages of private file mappings paged out are still in swap after the read-back"
    );
    // Each page read through the process's page tables faulted there, and
    // the kernel counted it to the process's cgroup: the mover hands those
    // faults on for the engine to leave out of the context's activity.
    // (Not one per page paged out: some come back without it, 10 of 43
    // here, before it reads.)
    assert!(
        faults > 0 && faults <= out,
        "the read-back of {out} pages from swap handed on {faults} faults"
    );
}

/// A woken context's read-back leaves them to its runtime: its heap first
/// (bench/faas, session 74: read first, ~190 of them a wake from zram, its
/// read-backs took 2-5 ms longer and the runs had fewer warm calls).
#[test]
fn a_wakes_read_back_leaves_them_to_the_runtime() {
    let _g = serial();
    let (out, left, faults) = read_back_once("writtenwake", true);
    assert_eq!(faults, 0, "a wake's read-back read written file pages");
    assert!(left > 0, "none of {out} written pages left in swap");
}
