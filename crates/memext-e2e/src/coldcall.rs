//! What a cold call costs when the DRAM is full (a benchmark: it measures and
//! prints). bench/faas judges its calls against "the physical limit of a cold
//! call", the heap over the tier's bulk read-back bandwidth into free DRAM
//! (issue 16's p99 target is 1.5x that). A host kept full (its work-conserving
//! target) reads a heap back into a cgroup at its cap, where every page read
//! back is paid for by one reclaimed. This measures, on the active swap tier,
//! a function's heap (HEAP MiB, half random and half zero pages as bench/faas's)
//! paged out in a parent cgroup beside a filler (FILLER MiB, the same content),
//! and then its owner reading every page (the call), eleven ways:
//!
//! - `into-room`: the parent's cap lifted, the heap read back from its end by
//!   MADV_WILLNEED from outside while the owner reads from its start (memext's
//!   read-back of a woken context on zram);
//! - `fault-full`: the cap at the usage, the owner alone (plain Linux: every
//!   fault reclaims at the cap);
//! - `readback-full`: the cap at the usage, read back as in `into-room`;
//! - `room-beside`: the same, while a third thread pages HEAP MiB of the filler
//!   out by MADV_PAGEOUT (room made on the other CPU as the call runs);
//! - `room-first`: HEAP MiB of the filler paged out first (timed apart), then
//!   as `readback-full`;
//! - `into-room-evict`: as `into-room`, while a third thread pages HEAP MiB of
//!   the filler out (room made for later calls, in the call's time), at the
//!   call's priority, and `into-room-evict19` the same at nice 19 (memext's
//!   mover and reclaimer when no wake waits for them);
//! - `floor-10`, `floor-30`: as `into-room`, but the function's own limit at
//!   its floor (`FLOOR`, memext's default for an idle extend context) as the
//!   call comes, lifted 10 or 30 ms later (the wake seen), the read-back
//!   starting then: a fault beyond the floor waits until then (OOM kill
//!   off, as memext sets its contexts).
//!
//! - `map-room`, `map-full`: as `into-room` and `readback-full`, but the
//!   read-back from outside maps the pages it reads into the owner's page
//!   tables (process_vm_readv of a byte a page, `memext_sys::populate`), so
//!   that the owner takes no fault for the pages it reached first.
//!
//! Each round runs every way once, the order rotated between rounds; it
//! prints each call's time and, per way, the median, the spread and the time
//! per MiB against `into-room`'s.
//! Usage: memext-e2e coldcall [HEAP_MIB [FILLER_MIB [ROUNDS]]] (64, 512, 5).

use std::time::{Duration, Instant};

use anyhow::{ensure, Context};
use memext_cgroup::{AnyCgroup, Hierarchy, Limit, LimitKnob, MemoryCgroup, Version};
use memext_sys::madvise::{advise, Advice};
use memext_sys::pagemap::{PageState, Pagemap};
use memext_sys::pidfd::ProcessHandle;
use memext_sys::populate::populate;
use memext_sys::swap::active_swaps;
use memext_sys::AddrRange;

use crate::scenario::{release_swap_cache, resident_ranges};
use crate::toucher::Toucher;
use crate::{host_hierarchy, remove_cgroups, ScratchCgroup};

const WAYS: [&str; 11] = [
    "into-room",
    "fault-full",
    "readback-full",
    "room-beside",
    "room-first",
    "into-room-evict",
    "into-room-evict19",
    "floor-10",
    "floor-30",
    "map-room",
    "map-full",
];
/// An idle extend context's limit (memext's default floor).
const FLOOR: u64 = 4 << 20;
/// What the cap leaves above the parent's usage when "full".
const FULL_SLACK: u64 = 1 << 20;
/// Read back in blocks of this size, the last block first.
const BLOCK: u64 = 2 << 20;

/// One call: how long the owner's read of its heap took, its major faults,
/// and what the helpers took.
struct Call {
    micros: u64,
    major_faults: u64,
    read_back_ms: Option<f64>,
    room_ms: Option<f64>,
}

/// A child cgroup of the scratch cgroup's parent, removed on drop.
struct Sibling<'a> {
    h: &'a Hierarchy,
    path: memext_cgroup::CgroupPath,
}

impl Drop for Sibling<'_> {
    fn drop(&mut self) {
        remove_cgroups(self.h, std::slice::from_ref(&self.path));
    }
}

fn parse(arg: Option<&str>, default: usize, what: &str) -> anyhow::Result<usize> {
    let v = arg.map_or(Ok(default), |a| {
        a.parse::<usize>()
            .with_context(|| format!("{what} must be a whole number, not {a:?}"))
    })?;
    ensure!(v > 0, "{what} must be above 0");
    Ok(v)
}

fn cap_knob(c: &AnyCgroup) -> LimitKnob {
    match c.version() {
        Version::V1 => LimitKnob::V1Limit,
        Version::V2 => LimitKnob::Max,
    }
}

fn page_range(t: &Toucher) -> AddrRange {
    let page = memext_sys::page_size();
    AddrRange::new(t.addr.div_ceil(page) * page, (t.addr + t.len) / page * page)
}

/// The ranges of `range` in `state`, cut into `BLOCK`s, last first.
fn blocks_from_the_end(
    pid: u32,
    range: AddrRange,
    state: PageState,
) -> anyhow::Result<Vec<AddrRange>> {
    let mut out = Vec::new();
    for r in Pagemap::open(pid)?
        .scan(range)?
        .into_iter()
        .filter(|r| r.state == state)
    {
        let mut s = r.range.start;
        while s < r.range.end {
            let e = (s + BLOCK).min(r.range.end);
            out.push(AddrRange::new(s, e));
            s = e;
        }
    }
    out.reverse();
    Ok(out)
}

/// Up to `bytes` of the filler's resident ranges.
fn filler_room(pid: u32, range: AddrRange, bytes: u64) -> anyhow::Result<Vec<AddrRange>> {
    let mut out = Vec::new();
    let mut left = bytes;
    for r in resident_ranges(&mut Pagemap::open(pid)?, range)? {
        if left == 0 {
            break;
        }
        let take = r.len().min(left);
        out.push(AddrRange::new(r.start, r.start + take));
        left -= take;
    }
    Ok(out)
}

fn ms_since(t0: Instant) -> f64 {
    t0.elapsed().as_secs_f64() * 1e3
}

/// Everything back where a call starts: the filler whole in DRAM, the heap in
/// the tier (none of it in the swap cache), the parent's cap lifted.
fn prepare(
    parent: &AnyCgroup,
    fcg: &AnyCgroup,
    filler: &mut Toucher,
    f: &Toucher,
    heap: u64,
) -> anyhow::Result<()> {
    parent.write_limit(cap_knob(parent), Limit::Max)?;
    fcg.write_limit(cap_knob(fcg), Limit::Max)?;
    filler.touch()?;
    let range = page_range(f);
    let ws = resident_ranges(&mut Pagemap::open(f.pid())?, range)?;
    advise(&ProcessHandle::open(f.pid())?, &ws, Advice::PageOut)?;
    release_swap_cache(fcg, heap)?;
    Ok(())
}

fn cap_at_usage(parent: &AnyCgroup) -> anyhow::Result<()> {
    let usage = parent.memory()?.usage_bytes;
    parent.write_limit(cap_knob(parent), Limit::Bytes(usage + FULL_SLACK))?;
    Ok(())
}

fn one_call(
    way: &str,
    parent: &AnyCgroup,
    fcg: &AnyCgroup,
    f: &mut Toucher,
    filler: &Toucher,
    heap: u64,
) -> anyhow::Result<Call> {
    let fpid = f.pid();
    let heap_ranges = blocks_from_the_end(fpid, page_range(f), PageState::Swapped)?;
    let (filler_pid, filler_range) = (filler.pid(), page_range(filler));
    let mut room_ms = None;
    match way {
        "into-room" | "into-room-evict" | "into-room-evict19" | "map-room" => {}
        "floor-10" | "floor-30" => fcg.write_limit(cap_knob(fcg), Limit::Bytes(FLOOR))?,
        "room-first" => {
            cap_at_usage(parent)?;
            let room = filler_room(filler_pid, filler_range, heap)?;
            let t0 = Instant::now();
            advise(&ProcessHandle::open(filler_pid)?, &room, Advice::PageOut)?;
            room_ms = Some(ms_since(t0));
        }
        _ => cap_at_usage(parent)?,
    }
    let read_back = way != "fault-full";
    let maps = way.starts_with("map-");
    let nice = if way == "into-room-evict19" { 19 } else { 0 };
    let lift_after = match way {
        "floor-10" => Some(Duration::from_millis(10)),
        "floor-30" => Some(Duration::from_millis(30)),
        _ => None,
    };
    let beside = if matches!(way, "room-beside" | "into-room-evict" | "into-room-evict19") {
        Some(filler_room(filler_pid, filler_range, heap)?)
    } else {
        None
    };
    std::thread::scope(|s| -> anyhow::Result<Call> {
        let rb = read_back.then(|| {
            s.spawn(move || -> anyhow::Result<f64> {
                let h = ProcessHandle::open(fpid)?;
                if let Some(d) = lift_after {
                    std::thread::sleep(d);
                    fcg.write_limit(cap_knob(fcg), Limit::Max)?;
                }
                let t0 = Instant::now();
                if maps {
                    populate(&h, &heap_ranges)?;
                } else {
                    advise(&h, &heap_ranges, Advice::WillNeed)?;
                }
                Ok(ms_since(t0))
            })
        });
        let room = beside.map(|ranges| {
            s.spawn(move || -> anyhow::Result<f64> {
                memext_sys::sched::set_thread_nice(nice)?;
                let h = ProcessHandle::open(filler_pid)?;
                let t0 = Instant::now();
                advise(&h, &ranges, Advice::PageOut)?;
                Ok(ms_since(t0))
            })
        });
        let touched = f.touch()?;
        let join = |j: std::thread::ScopedJoinHandle<'_, anyhow::Result<f64>>| {
            j.join()
                .map_err(|_| anyhow::anyhow!("a helper thread panicked"))?
        };
        let read_back_ms = rb.map(join).transpose()?;
        if let Some(j) = room {
            room_ms = Some(join(j)?);
        }
        Ok(Call {
            micros: touched.micros,
            major_faults: touched.major_faults,
            read_back_ms,
            room_ms,
        })
    })
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The benchmark; see the module's comment.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    let heap_mib = parse(args.first().map(String::as_str), 64, "HEAP_MIB")?;
    let filler_mib = parse(args.get(1).map(String::as_str), 512, "FILLER_MIB")?;
    let rounds = parse(args.get(2).map(String::as_str), 5, "ROUNDS")?;
    ensure!(
        filler_mib >= 2 * heap_mib,
        "FILLER_MIB must be at least twice HEAP_MIB (room is made from it)"
    );
    let swaps = active_swaps()?;
    ensure!(
        !swaps.is_empty(),
        "no active swap: set up a tier first (scripts/coldcall does)"
    );
    let me = std::env::current_exe()?;
    let h = host_hierarchy()?;
    let cg = ScratchCgroup::new(&h, "function")?;
    let sibling = Sibling {
        h: &h,
        path: cg.parent.child("filler")?,
    };
    h.create(&sibling.path)
        .with_context(|| format!("creating cgroup {}", sibling.path))?;
    let parent = h.open(&cg.parent)?;
    let fcg = cg.open()?;
    let mut filler = Toucher::spawn(&me, filler_mib << 20)?;
    h.attach(&sibling.path, filler.pid())?;
    filler.alloc_mixed()?;
    if fcg.version() == Version::V1 {
        // As memext sets its contexts: a fault at the floor waits in the
        // kernel's OOM wait until the limit is lifted, not killed.
        fcg.write_limit(LimitKnob::V1OomKillDisable, Limit::Bytes(1))?;
    }
    let mut f = Toucher::spawn(&me, heap_mib << 20)?;
    cg.attach(f.pid())?;
    f.alloc_mixed()?;
    let heap = page_range(&f).len();
    let tier: Vec<String> = swaps.iter().map(|s| s.path.display().to_string()).collect();
    println!(
        "a cold call of a {heap_mib} MiB heap beside a {filler_mib} MiB filler, swap: {}, {rounds} rounds",
        tier.join(", ")
    );
    println!(
        "{:<6} {:<14} {:>9} {:>9} {:>10} {:>10}",
        "round", "way", "call ms", "ms/MiB", "majflt", "helper ms"
    );
    let mut by_way: Vec<Vec<f64>> = vec![Vec::new(); WAYS.len()];
    for r in 0..rounds {
        for k in 0..WAYS.len() {
            let i = (k + r) % WAYS.len();
            prepare(&parent, &fcg, &mut filler, &f, heap)?;
            let c = one_call(WAYS[i], &parent, &fcg, &mut f, &filler, heap)?;
            let ms = c.micros as f64 / 1e3;
            by_way[i].push(ms);
            let helper = match (c.read_back_ms, c.room_ms) {
                (Some(a), Some(b)) => format!("{a:.1} + room {b:.1}"),
                (Some(a), None) => format!("{a:.1}"),
                (None, Some(b)) => format!("room {b:.1}"),
                (None, None) => "-".into(),
            };
            println!(
                "{:<6} {:<14} {:>9.1} {:>9.2} {:>10} {:>10}",
                r + 1,
                WAYS[i],
                ms,
                ms / heap_mib as f64,
                c.major_faults,
                helper
            );
        }
    }
    parent.write_limit(cap_knob(&parent), Limit::Max)?;
    let base = median(&mut by_way[0].clone());
    println!("\n| way | call p50 (min-max) | ms/MiB | x into-room |");
    println!("|---|---|---|---|");
    for (i, v) in by_way.iter_mut().enumerate() {
        let (lo, hi) = (
            v.iter().copied().fold(f64::INFINITY, f64::min),
            v.iter().copied().fold(0.0, f64::max),
        );
        let m = median(v);
        println!(
            "| {} | {m:.1} ms ({lo:.1}-{hi:.1}) | {:.2} | {:.2}x |",
            WAYS[i],
            m / heap_mib as f64,
            m / base
        );
    }
    drop(f);
    drop(filler);
    drop(sibling);
    drop(cg);
    Ok(())
}
