//! The mover's map-backs: read-back pages mapped as huge pages
//! (MADV_COLLAPSE) before a predicted call, and the read-back pages of the
//! blocks the kernel would not make huge pages mapped one by one. Each stops
//! between blocks when `stop` says so (a woken context's read-back waits).

use std::collections::HashSet;
use std::time::Instant;

use memext_engine::workingset::{ChunkKey, CHUNK_BYTES};
use memext_engine::ContextId;
use memext_sys::madvise::Advice;
use memext_sys::pidfd::{PidfdError, ProcessHandle};
use memext_sys::populate::{populate, PopulateError};
use memext_sys::AddrRange;

use super::paced::{advise_paced, Populated};
use super::pages::{by_chunk, per_pid, whole_blocks_of};

/// What a map-back did: the pages it mapped (as huge pages, and one by one),
/// the brought-back ranges outside
/// the blocks it asked for (only those can still show, by being mapped, that
/// the context touched them), and whether `stop` ended it early.
pub(super) struct Mapped {
    pub(super) pages: u64,
    pub(super) rest: Vec<(u32, AddrRange)>,
    pub(super) stopped: bool,
    /// The faults mapping pages one by one took, (all, major) as the cgroup counts them: counted by
    /// the kernel to the context as its own (`PopulateOutcome::faults`).
    pub(super) faults: (u64, u64),
}

/// Maps the chunks that had pages brought back as huge pages (MADV_COLLAPSE
/// reads what is still in flight, then maps each whole 2 MiB block): those
/// the working set ranks (`order`), hottest first, then the other blocks of
/// `pids` brought back and held whole (`blocks_to_map`).
pub(super) fn map_chunks_back(
    key: &ContextId,
    pids: &[u32],
    order: &[ChunkKey],
    brought_back: Vec<(u32, AddrRange)>,
    mut stop: impl FnMut() -> bool,
) -> Result<Mapped, String> {
    let back: HashSet<ChunkKey> = brought_back
        .iter()
        .flat_map(|(pid, r)| by_chunk(*pid, std::slice::from_ref(r)))
        .map(|(k, _)| k)
        .collect();
    let ranked: HashSet<ChunkKey> = order.iter().copied().collect();
    let mut whole = HashSet::new();
    for &pid in pids {
        if back.iter().any(|k| k.pid == pid && !ranked.contains(k)) {
            whole.extend(
                by_chunk(pid, &whole_blocks_of(pid)?)
                    .into_iter()
                    .map(|(k, _)| k),
            );
        }
    }
    let chunks = blocks_to_map(order, &back, &whole);
    let work = per_pid(
        chunks
            .iter()
            .map(|k| (k.pid, AddrRange::new(k.start(), k.start() + CHUNK_BYTES)))
            .collect(),
    );
    let t0 = Instant::now();
    let paced = advise_paced(&work, Advice::Collapse, 0, &mut stop)?;
    // Refused blocks are not asked again: in the runs measured, every block
    // refused once was refused again, and 855 of 857 for good (docs/faas/
    // s67-2026-12-04, `errno/`: a block its mapping covers in part, EINVAL,
    // or with a hole, ENOMEM). Their brought-back pages are mapped one by one.
    let populated = if paced.stopped {
        Populated::default()
    } else {
        populate_refused(&brought_back, &paced.skipped, &mut stop)?
    };
    let (bytes, seconds) = (
        paced.pages * memext_sys::page_size(),
        t0.elapsed().as_secs_f64(),
    );
    tracing::info!(
        event = "mapped-back",
        context = %key,
        bytes,
        seconds,
        refused = paced.refused.total(),
        refused_busy = paced.refused.busy,
        refused_charge = paced.refused.charge,
        refused_no_memory = paced.refused.no_memory,
        refused_unsuitable = paced.refused.unsuitable,
        populated = populated.pages,
        populate_seconds = populated.seconds,
        populate_faults = populated.faults.0,
        blocks = chunks.len(),
        gave_way = paced.stopped || populated.stopped,
        "{key}: mapped back {} in {seconds:.3} s ({} of {} blocks refused by the kernel, {} of their pages mapped one by one)",
        crate::units::human_bytes(bytes),
        paced.refused.total(),
        chunks.len(),
        populated.pages,
    );
    let mapped: HashSet<ChunkKey> = chunks.into_iter().collect();
    Ok(Mapped {
        pages: paced.pages + populated.pages,
        rest: outside(brought_back, &mapped),
        stopped: paced.stopped || populated.stopped,
        faults: populated.faults,
    })
}

/// The blocks a predicted call's map-back asks for: the chunks of `order`
/// (the working set, hottest first) that had pages brought back, then the
/// other brought-back chunks held `whole`, by address. The working set is
/// what its snapshots saw resident, and a function its capped parent had
/// paged in part out when they were taken ranks only part of its heap:
/// bench/faas (session 68's base runs), fn0025's 81 MiB read back before
/// each periodic call, 26 blocks ranked, its calls 9,980-9,992 minor faults
/// (39 MiB) and 19-37 ms. A chunk not held whole is left: MADV_COLLAPSE
/// would fill its missing pages with zeroes.
fn blocks_to_map(
    order: &[ChunkKey],
    back: &HashSet<ChunkKey>,
    whole: &HashSet<ChunkKey>,
) -> Vec<ChunkKey> {
    let mut chunks: Vec<ChunkKey> = order.iter().filter(|k| back.contains(k)).copied().collect();
    let ranked: HashSet<ChunkKey> = order.iter().copied().collect();
    let mut rest: Vec<ChunkKey> = back
        .iter()
        .filter(|k| !ranked.contains(k) && whole.contains(k))
        .copied()
        .collect();
    rest.sort();
    chunks.extend(rest);
    chunks
}

/// Maps into their process's page tables, from outside (`memext_sys::populate`:
/// process_vm_readv of a byte a page), the brought-back pages of the blocks
/// MADV_COLLAPSE refused, block by block in the order refused (hottest first),
/// so that the predicted call takes no minor fault on them either (1.4-1.7 µs
/// each here; a bench/faas call after a predicted bring-back took ~260 of them
/// a block left unmapped). Stops between blocks when `stop` says so.
fn populate_refused(
    brought_back: &[(u32, AddrRange)],
    refused: &[(u32, AddrRange)],
    mut stop: impl FnMut() -> bool,
) -> Result<Populated, String> {
    let t0 = Instant::now();
    let mut out = Populated::default();
    let mut handles: Vec<(u32, Option<ProcessHandle>)> = Vec::new();
    for (pid, ranges) in brought_back_in(brought_back, refused) {
        let at = match handles.iter().position(|(p, _)| *p == pid) {
            Some(i) => i,
            None => {
                let h = match ProcessHandle::open(pid) {
                    Ok(h) => Some(h),
                    Err(PidfdError::Vanished { .. }) => None,
                    Err(e) => return Err(e.to_string()),
                };
                handles.push((pid, h));
                handles.len() - 1
            }
        };
        let Some(handle) = &handles[at].1 else {
            continue;
        };
        match populate(handle, &ranges) {
            Ok(p) => {
                out.pages += p.pages;
                out.faults.0 += p.faults.0;
                out.faults.1 += p.faults.1;
            }
            Err(PopulateError::Vanished { .. }) => handles[at].1 = None,
            Err(e) => return Err(e.to_string()),
        }
        if stop() {
            out.stopped = true;
            break;
        }
    }
    out.seconds = t0.elapsed().as_secs_f64();
    Ok(out)
}

/// The parts of the `brought_back` ranges within each block of `refused`,
/// block by block in `refused`'s order (a block named twice, once).
fn brought_back_in(
    brought_back: &[(u32, AddrRange)],
    refused: &[(u32, AddrRange)],
) -> Vec<(u32, Vec<AddrRange>)> {
    let mut by_block: std::collections::HashMap<ChunkKey, Vec<AddrRange>> =
        std::collections::HashMap::new();
    for (pid, r) in brought_back {
        for (k, part) in by_chunk(*pid, std::slice::from_ref(r)) {
            by_block.entry(k).or_default().push(part);
        }
    }
    refused
        .iter()
        .flat_map(|(pid, r)| by_chunk(*pid, std::slice::from_ref(r)))
        .filter_map(|(k, _)| by_block.remove(&k).map(|rs| (k.pid, rs)))
        .collect()
}

/// The parts of the brought-back ranges outside the `mapped` chunks: only
/// those can still show, by being mapped, that the context touched them.
fn outside(
    brought_back: Vec<(u32, AddrRange)>,
    mapped: &HashSet<ChunkKey>,
) -> Vec<(u32, AddrRange)> {
    brought_back
        .into_iter()
        .flat_map(|(pid, r)| by_chunk(pid, std::slice::from_ref(&r)))
        .filter(|(k, _)| !mapped.contains(k))
        .map(|(k, r)| (k.pid, r))
        .collect()
}

/// Maps as huge pages every 2 MiB block of `pids`' private anonymous memory
/// held whole (`pages::whole_blocks`), what it kept in DRAM as well as what
/// was just read back: before a predicted call, so that the call takes no
/// fault and sets one accessed bit a block, not one a page (reclaim's scans
/// clear those of the pages they pass and leave). Blocks mapped so already
/// cost the kernel a look.
pub(super) fn map_kept_back(
    key: &ContextId,
    pids: &[u32],
    brought_back: Vec<(u32, AddrRange)>,
    stop: impl FnMut() -> bool,
) -> Result<Mapped, String> {
    let mut work = Vec::new();
    for &pid in pids {
        let blocks = whole_blocks_of(pid)?;
        if !blocks.is_empty() {
            work.push((pid, blocks));
        }
    }
    let blocks: usize = work.iter().map(|(_, b)| b.len()).sum();
    let t0 = Instant::now();
    let paced = advise_paced(&work, Advice::Collapse, 0, stop)?;
    let (bytes, seconds) = (
        paced.pages * memext_sys::page_size(),
        t0.elapsed().as_secs_f64(),
    );
    tracing::info!(
        event = "mapped-kept",
        context = %key,
        bytes,
        seconds,
        refused = paced.refused.total(),
        refused_busy = paced.refused.busy,
        refused_charge = paced.refused.charge,
        refused_no_memory = paced.refused.no_memory,
        refused_unsuitable = paced.refused.unsuitable,
        blocks,
        gave_way = paced.stopped,
        "{key}: mapped {} held whole in {seconds:.3} s ({} of {blocks} blocks refused by the kernel)",
        crate::units::human_bytes(bytes),
        paced.refused.total(),
    );
    let mapped: HashSet<ChunkKey> = work
        .iter()
        .flat_map(|(pid, b)| by_chunk(*pid, b))
        .map(|(k, _)| k)
        .collect();
    Ok(Mapped {
        pages: paced.pages,
        rest: outside(brought_back, &mapped),
        stopped: paced.stopped,
        faults: (0, 0),
    })
}

#[cfg(test)]
#[path = "mover_map_tests.rs"]
mod tests;
