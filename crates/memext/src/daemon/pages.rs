//! Page ranges of a context's processes: which
//! ranges of its swappable memory (private anonymous and shared memory) are
//! resident or swapped, which of its shared memory is not resident, which
//! pages of its private file mappings it wrote are in swap, their split into
//! working-set chunks, and how many of the pages brought back were touched
//! since (accuracy). The moves themselves are in `paced`.

use std::collections::HashMap;

use memext_engine::workingset::{ChunkKey, CHUNK_BYTES};
use memext_sys::maps::{read_maps, Mapping};
use memext_sys::pagemap::{PageRange, PageState, Pagemap};
use memext_sys::AddrRange;

/// Resident or swapped ranges of the swappable memory of `pid` (pagemap
/// reports no shared memory as swapped: see [`read_back_ranges`]).
pub(super) fn ranges_of(pid: u32, state: PageState) -> Result<Vec<AddrRange>, String> {
    Ok(scan(pid, Mapping::is_swappable)?
        .1
        .into_iter()
        .filter(|r| r.state == state)
        .map(|r| r.range)
        .collect())
}

/// The 2 MiB blocks of the private anonymous memory of `pid` that it holds
/// whole: every page in DRAM, in the swap cache or in swap (`whole_blocks`).
pub(super) fn whole_blocks_of(pid: u32) -> Result<Vec<AddrRange>, String> {
    Ok(whole_blocks(&scan(pid, Mapping::is_private_anonymous)?.1))
}

/// The 2 MiB-aligned blocks that `ranges` (sorted and disjoint, as a
/// pagemap scan gives them) cover whole, whatever their pages' states. A
/// block a page is missing from is left out: MADV_COLLAPSE would fill it
/// with zeroed pages, memory the process never had.
pub(super) fn whole_blocks(ranges: &[PageRange]) -> Vec<AddrRange> {
    let mut runs: Vec<AddrRange> = Vec::new();
    for r in ranges {
        match runs.last_mut() {
            Some(last) if last.end == r.range.start => last.end = r.range.end,
            _ => runs.push(r.range),
        }
    }
    runs.iter()
        .flat_map(|r| {
            let (first, end) = (r.start.div_ceil(CHUNK_BYTES), r.end / CHUNK_BYTES);
            (first..end).map(|i| AddrRange::new(i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES))
        })
        .collect()
}

/// What a read-back of one process asks for (`read_back_ranges`).
#[derive(Debug, Default)]
pub(super) struct ReadBack {
    /// The swapped ranges of its swappable memory.
    pub(super) swapped: Vec<AddrRange>,
    /// The ranges of the shared memory it maps that are not resident
    /// (pagemap cannot tell which shared pages are in swap: a swapped-out
    /// shared page leaves no entry in the page table; WILLNEED on such a
    /// range reads only what is in swap).
    pub(super) shared_absent: Vec<AddrRange>,
    /// The swapped pages of its private file mappings, pages it wrote (a
    /// library's data): WILLNEED does not read them (`is_private_file`), a
    /// read through its page tables does (`memext_sys::populate`).
    pub(super) written_file: Vec<AddrRange>,
}

/// What a read-back of `pid` asks for, from one maps read and one pagemap.
pub(super) fn read_back_ranges(pid: u32) -> Result<ReadBack, String> {
    let Some(maps) = maps_of(pid)? else {
        return Ok(ReadBack::default());
    };
    let (swappable, files): (Vec<Mapping>, Vec<Mapping>) = maps
        .into_iter()
        .filter(|m| m.is_swappable() || m.is_private_file())
        .partition(Mapping::is_swappable);
    // Scanned apart: a scan joins adjacent runs across mappings, and a
    // library's data is often followed by its anonymous .bss.
    let Some((scanned, of_files)) = pagemap_of(pid, |pm| {
        Ok((pm.scan_mappings(&swappable)?, pm.scan_mappings(&files)?))
    })?
    else {
        return Ok(ReadBack::default());
    };
    let of = |scanned: &[PageRange], state: PageState| -> Vec<AddrRange> {
        scanned
            .iter()
            .filter(|r| r.state == state)
            .map(|r| r.range)
            .collect()
    };
    let resident = of(&scanned, PageState::Resident);
    let shared_absent = swappable
        .iter()
        .filter(|m| m.is_shared_memory())
        .flat_map(|m| absent(m.range, &resident))
        .collect();
    Ok(ReadBack {
        swapped: of(&scanned, PageState::Swapped),
        shared_absent,
        written_file: of(&of_files, PageState::Swapped),
    })
}

/// The mappings of `pid` that `which` selects and their pages' states (none
/// for a process that has exited).
fn scan(pid: u32, which: fn(&Mapping) -> bool) -> Result<(Vec<Mapping>, Vec<PageRange>), String> {
    let Some(maps) = maps_of(pid)? else {
        return Ok(Default::default());
    };
    let maps: Vec<Mapping> = maps.into_iter().filter(which).collect();
    match pagemap_of(pid, |pm| pm.scan_mappings(&maps))? {
        Some(r) => Ok((maps, r)),
        None => Ok(Default::default()),
    }
}

/// The mappings of `pid`, or None if it has exited.
fn maps_of(pid: u32) -> Result<Option<Vec<Mapping>>, String> {
    match read_maps(pid) {
        Ok(m) => Ok(Some(m)),
        Err(memext_sys::maps::MapsError::Vanished { .. }) => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

/// `f` on the pagemap of `pid`, or None if it has exited.
fn pagemap_of<T>(
    pid: u32,
    f: impl FnOnce(&mut Pagemap) -> Result<T, memext_sys::pagemap::PagemapError>,
) -> Result<Option<T>, String> {
    match Pagemap::open(pid).and_then(|mut pm| f(&mut pm)) {
        Ok(r) => Ok(Some(r)),
        Err(memext_sys::pagemap::PagemapError::Vanished { .. }) => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

/// The parts of `within` that none of `resident` (sorted, disjoint) covers.
fn absent(within: AddrRange, resident: &[AddrRange]) -> Vec<AddrRange> {
    let mut out = Vec::new();
    let mut at = within.start;
    for r in resident
        .iter()
        .filter(|r| r.end > within.start && r.start < within.end)
    {
        if r.start > at {
            out.push(AddrRange::new(at, r.start));
        }
        at = at.max(r.end);
    }
    if at < within.end {
        out.push(AddrRange::new(at, within.end));
    }
    out
}

/// Splits ranges at chunk boundaries: (chunk, range within it).
pub(super) fn by_chunk(pid: u32, ranges: &[AddrRange]) -> Vec<(ChunkKey, AddrRange)> {
    let mut out = Vec::new();
    for r in ranges {
        let mut a = r.start;
        while a < r.end {
            let index = a / CHUNK_BYTES;
            let end = ((index + 1) * CHUNK_BYTES).min(r.end);
            out.push((ChunkKey { pid, index }, AddrRange::new(a, end)));
            a = end;
        }
    }
    out
}

/// Groups (pid, range) pairs into per-pid work, keeping their order.
pub(super) fn per_pid(pairs: Vec<(u32, AddrRange)>) -> Vec<(u32, Vec<AddrRange>)> {
    let mut work: Vec<(u32, Vec<AddrRange>)> = Vec::new();
    for (pid, r) in pairs {
        match work.last_mut() {
            Some((p, ranges)) if *p == pid => ranges.push(r),
            _ => work.push((pid, vec![r])),
        }
    }
    work
}

/// Of the ranges brought back, the share now mapped (touched by the process).
pub(super) fn accuracy(ranges: &[(u32, AddrRange)]) -> Option<f64> {
    let mut by_pid: HashMap<u32, Vec<AddrRange>> = HashMap::new();
    for (pid, r) in ranges {
        by_pid.entry(*pid).or_default().push(*r);
    }
    let page = memext_sys::page_size();
    let (mut total, mut touched) = (0u64, 0u64);
    for (pid, rs) in by_pid {
        let Ok(mut pm) = Pagemap::open(pid) else {
            continue;
        };
        for r in rs {
            total += r.len() / page;
            if let Ok(found) = pm.scan(r) {
                touched += found
                    .iter()
                    .filter(|p| p.state == PageState::Resident)
                    .map(|p| p.range.len() / page)
                    .sum::<u64>();
            }
        }
    }
    (total > 0).then(|| touched as f64 / total as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_not_resident_of_a_mapping_is_absent() {
        let r = |a: u64, b: u64| AddrRange::new(a << 12, b << 12);
        let within = r(10, 40);
        // Resident ranges of other mappings (before and after) do not count.
        let resident = [r(0, 5), r(10, 12), r(20, 25), r(30, 40), r(50, 60)];
        assert_eq!(absent(within, &resident), vec![r(12, 20), r(25, 30)]);
        assert_eq!(absent(within, &[]), vec![within]);
        assert_eq!(absent(within, &[r(5, 45)]), vec![]);
    }

    #[test]
    fn only_blocks_held_whole_are_mapped_as_huge_pages() {
        const B: u64 = CHUNK_BYTES;
        let pr = |a: u64, b: u64, state: PageState| PageRange {
            range: AddrRange::new(a, b),
            state,
        };
        let ranges = [
            // Blocks 1 and 2 whole: resident, then in swap, then resident.
            pr(B - 4096, B + 8192, PageState::Resident),
            pr(B + 8192, 2 * B + 4096, PageState::Swapped),
            pr(2 * B + 4096, 3 * B, PageState::Resident),
            // Block 4 misses its last page.
            pr(4 * B, 5 * B - 4096, PageState::Resident),
            // Block 6 whole, and only part of block 7.
            pr(6 * B, 7 * B + 4096, PageState::Swapped),
        ];
        let blocks = |v: &[u64]| -> Vec<AddrRange> {
            v.iter()
                .map(|&i| AddrRange::new(i * B, (i + 1) * B))
                .collect()
        };
        assert_eq!(whole_blocks(&ranges), blocks(&[1, 2, 6]));
        assert_eq!(whole_blocks(&[]), vec![]);
    }

    #[test]
    fn ranges_split_at_chunk_boundaries() {
        let r = AddrRange::new(CHUNK_BYTES - 4096, 2 * CHUNK_BYTES + 8192);
        let pieces = by_chunk(9, &[r]);
        assert_eq!(pieces.len(), 3);
        assert_eq!(pieces[0].0, ChunkKey { pid: 9, index: 0 });
        assert_eq!(pieces[0].1.len(), 4096);
        assert_eq!(pieces[1].1.len(), CHUNK_BYTES);
        assert_eq!(
            pieces[2].1,
            AddrRange::new(2 * CHUNK_BYTES, 2 * CHUNK_BYTES + 8192)
        );
    }
}
