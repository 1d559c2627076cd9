//! The mover's map-backs: read-back pages mapped as huge pages
//! (MADV_COLLAPSE) before a predicted call. Each stops between blocks when
//! `stop` says so (a woken context's read-back waits).

use std::collections::HashSet;
use std::time::Instant;

use memext_engine::workingset::{ChunkKey, CHUNK_BYTES};
use memext_engine::ContextId;
use memext_sys::madvise::Advice;
use memext_sys::AddrRange;

use super::pages::{advise_paced, by_chunk, per_pid, whole_blocks_of};

/// What a map-back did: the pages it mapped, the brought-back ranges outside
/// the blocks it asked for (only those can still show, by being mapped, that
/// the context touched them), and whether `stop` ended it early.
pub(super) struct Mapped {
    pub(super) pages: u64,
    pub(super) rest: Vec<(u32, AddrRange)>,
    pub(super) stopped: bool,
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
    stop: impl FnMut() -> bool,
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
    let paced = advise_paced(&work, Advice::Collapse, 0, stop)?;
    // Refused blocks are not retried: in the runs measured, every block refused
    // once (a block the mapping only partly covers, or busy) was refused again.
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
        blocks = chunks.len(),
        gave_way = paced.stopped,
        "{key}: mapped back {} in {seconds:.3} s ({} of {} blocks refused by the kernel)",
        crate::units::human_bytes(bytes),
        paced.refused.total(),
        chunks.len()
    );
    let mapped: HashSet<ChunkKey> = chunks.into_iter().collect();
    Ok(Mapped {
        pages: paced.pages,
        rest: outside(brought_back, &mapped),
        stopped: paced.stopped,
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
    })
}

#[cfg(test)]
#[path = "mover_map_tests.rs"]
mod tests;
