//! The kernel-interface micro-benchmark (a benchmark, not a test: it measures
//! and prints). Needs root and an active swap tier (scripts/kbench sets one up).
//! Measures, through memext-sys, on a toucher child holding SIZE MiB:
//! pagemap scans (PAGEMAP_SCAN and pread), MADV_PAGEOUT, MADV_WILLNEED (until the
//! swap cache holds the pages), mapping them from outside (process_vm_readv)
//! and the cost of the first touch afterwards, and
//! prints them beside the figures of shared/MACHINE.md.

use std::time::{Duration, Instant};

use anyhow::{ensure, Context};
use memext_cgroup::MemoryCgroup;
use memext_sys::madvise::{advise, Advice};
use memext_sys::pagemap::{PageRange, PageState, Pagemap, Residency, ScanBackend};
use memext_sys::pidfd::ProcessHandle;
use memext_sys::populate::populate;
use memext_sys::swap::active_swaps;
use memext_sys::AddrRange;

use crate::scenario::{page_out_again, release_swap_cache, resident_ranges};
use crate::toucher::{TouchReport, Toucher};
use crate::{host_hierarchy, ScratchCgroup};

fn swap_cached_bytes() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("SwapCached:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .unwrap_or(0)
        * 1024
}

fn rate(pages: u64, d: Duration) -> String {
    let s = d.as_secs_f64().max(1e-9);
    format!("{:>12.0} pages/s  ({:>8.2} ms)", pages as f64 / s, s * 1e3)
}

/// The swapped ranges of a scan.
fn swapped_of(scanned: &[PageRange]) -> Vec<AddrRange> {
    scanned
        .iter()
        .filter(|r| r.state == PageState::Swapped)
        .map(|r| r.range)
        .collect()
}

/// Waits (at most 60 s from `t0`) until the swap cache holds `want` bytes;
/// returns the time since `t0`.
fn wait_for_swap_cache(want: u64, t0: Instant) -> Duration {
    while swap_cached_bytes() < want && t0.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_micros(500));
    }
    t0.elapsed()
}

/// Prints what a touch of `pages` pages cost, and the figure to compare with.
fn touched(what: &str, r: &TouchReport, pages: u64, expected: &str) {
    println!(
        "{what:<44} {:>12.2} us/page  ({} major, {} minor faults){expected}",
        r.micros as f64 / pages as f64,
        r.major_faults,
        r.minor_faults
    );
}

/// One long function on purpose: the micro-benchmark is a script, each
/// measurement printed as it is made, and reads best top to bottom.
pub fn run(size: Option<&str>) -> anyhow::Result<()> {
    let mib: usize = size
        .unwrap_or("1024")
        .parse()
        .context("SIZE_MIB must be a number")?;
    let swaps = active_swaps()?;
    ensure!(
        !swaps.is_empty(),
        "no active swap: set up a tier first (scripts/kbench does)"
    );
    let tier: Vec<String> = swaps
        .iter()
        .map(|s| format!("{} (prio {})", s.path.display(), s.priority))
        .collect();
    let me = std::env::current_exe()?;
    let h = host_hierarchy()?;
    let cg = ScratchCgroup::new(&h, "kbench")?;
    let c = cg.open()?;
    let mut t = Toucher::spawn(&me, mib << 20)?;
    cg.attach(t.pid())?;
    t.alloc()?;
    let page = memext_sys::page_size();
    let range = AddrRange::new(t.addr.div_ceil(page) * page, (t.addr + t.len) / page * page);
    let pages = range.len() / page;
    let target = ProcessHandle::open(t.pid())?;
    println!(
        "memext kernel-interface micro-benchmark: {mib} MiB ({pages} pages), swap: {}",
        tier.join(", ")
    );
    println!(
        "{:<44} {:>38}   reference (shared/MACHINE.md)",
        "operation", "measured"
    );

    for backend in [ScanBackend::Ioctl, ScanBackend::Pread] {
        let mut pm = Pagemap::open_with(t.pid(), backend)?;
        let mut best = Duration::MAX;
        for _ in 0..5 {
            let t0 = Instant::now();
            std::hint::black_box(pm.scan(range)?);
            best = best.min(t0.elapsed());
        }
        let label = format!("pagemap scan, resident ({:?})", pm.backend());
        println!("{label:<44} {}   1 GiB in 1-9 ms", rate(pages, best));
    }

    let mut pm = Pagemap::open(t.pid())?;
    let ws = resident_ranges(&mut pm, range)?;
    let t0 = Instant::now();
    let out = advise(&target, &ws, Advice::PageOut)?;
    let d = t0.elapsed();
    println!(
        "{:<44} {}   1 GiB in 150-400 ms",
        format!("MADV_PAGEOUT ({} calls)", out.calls),
        rate(out.bytes / page, d)
    );

    // A disk swap file leaves written pages in the swap cache until the next
    // reclaim; squeeze them out so that what follows reads from the tier.
    let t0 = Instant::now();
    release_swap_cache(&c, range.len())?;
    let d = t0.elapsed();
    println!(
        "{:<44} {}   (cgroup {} after: {} MiB)",
        "release swap cache via cgroup",
        rate(out.bytes / page, d),
        c.version(),
        c.memory()?.usage_bytes >> 20
    );

    let t0 = Instant::now();
    let scanned = pm.scan(range)?;
    let d = t0.elapsed();
    let res = Residency::of(&scanned);
    println!(
        "{:<44} {}   ({} of {} pages swapped)",
        "pagemap scan, swapped",
        rate(pages, d),
        res.swapped_pages,
        pages
    );

    let t0 = Instant::now();
    let back = advise(&target, &swapped_of(&scanned), Advice::WillNeed)?;
    let call = t0.elapsed();
    // Pages the release left in the swap cache are part of the swapped set
    // already, so the target is absolute, not a growth.
    let want = res.swapped_pages * page * 95 / 100;
    let filled = wait_for_swap_cache(want, t0);
    println!(
        "{:<44} {}",
        "MADV_WILLNEED call returns",
        rate(back.bytes / page, call)
    );
    println!(
        "{:<44} {}   215k/s swap file, 350k/s zram",
        "MADV_WILLNEED until swap cache holds 95%",
        rate(res.swapped_pages, filled)
    );

    touched(
        "first touch after WILLNEED",
        &t.touch()?,
        pages,
        "   ~1.5 us",
    );
    page_out_again(&target, &mut pm, &c, range)?;
    touched(
        "first touch without WILLNEED",
        &t.touch()?,
        pages,
        "   ~65 us swap file, 6-18 us zram",
    );

    // Read back again, then every page mapped from outside before the touch.
    page_out_again(&target, &mut pm, &c, range)?;
    advise(&target, &swapped_of(&pm.scan(range)?), Advice::WillNeed)?;
    wait_for_swap_cache(want, Instant::now());
    let t0 = Instant::now();
    let mapped = populate(&target, &[range])?;
    println!(
        "{:<44} {}",
        "mapping every page from outside (vm_readv)",
        rate(mapped.pages, t0.elapsed())
    );
    touched(
        "first touch after WILLNEED and mapping",
        &t.touch()?,
        pages,
        "",
    );
    drop(t);
    drop(cg);
    Ok(())
}
