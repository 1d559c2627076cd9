use memext_sys::pagemap::{PageState, Pagemap};

use super::*;

fn k(pid: u32, index: u64) -> ChunkKey {
    ChunkKey { pid, index }
}

fn set(keys: &[ChunkKey]) -> HashSet<ChunkKey> {
    keys.iter().copied().collect()
}

#[test]
fn the_ranked_chunks_brought_back_come_first_in_their_order() {
    let order = [k(1, 7), k(1, 3), k(1, 5)];
    let back = set(&[k(1, 3), k(1, 7)]);
    assert_eq!(
        blocks_to_map(&order, &back, &set(&[k(1, 3), k(1, 7)])),
        vec![k(1, 7), k(1, 3)]
    );
}

#[test]
fn blocks_brought_back_that_the_working_set_missed_follow_if_held_whole() {
    // The working set ranks two of the heap's blocks; four were read back.
    let order = [k(1, 9), k(1, 4)];
    let back = set(&[k(1, 4), k(1, 9), k(1, 12), k(1, 10), k(2, 2)]);
    // Block 10 misses a page: collapsing it would invent memory.
    let whole = set(&[k(1, 4), k(1, 9), k(1, 12), k(2, 2)]);
    assert_eq!(
        blocks_to_map(&order, &back, &whole),
        vec![k(1, 9), k(1, 4), k(1, 12), k(2, 2)]
    );
}

#[test]
fn whole_blocks_not_brought_back_are_not_asked_for() {
    let back = set(&[k(1, 4)]);
    let whole = set(&[k(1, 4), k(1, 5), k(1, 6)]);
    assert_eq!(blocks_to_map(&[], &back, &whole), vec![k(1, 4)]);
}

fn r(start: u64, end: u64) -> AddrRange {
    AddrRange::new(start, end)
}

#[test]
fn only_the_brought_back_pages_of_refused_blocks_are_taken_in_their_order() {
    let b = CHUNK_BYTES;
    // Brought back: part of block 1, all of block 2, a range over blocks 3-4;
    // and block 2 of another process.
    let back = [
        (7, r(b + 4096, b + 8192)),
        (7, r(2 * b, 3 * b)),
        (7, r(3 * b + 4096, 4 * b + 4096)),
        (8, r(2 * b, 3 * b)),
    ];
    // Refused: block 4, then block 1 twice, block 5 (nothing brought back
    // there), block 2 of process 8.
    let refused = [
        (7, r(4 * b, 5 * b)),
        (7, r(b, 2 * b)),
        (7, r(b, 2 * b)),
        (7, r(5 * b, 6 * b)),
        (8, r(2 * b, 3 * b)),
    ];
    assert_eq!(
        brought_back_in(&back, &refused),
        vec![
            (7, vec![r(4 * b, 4 * b + 4096)]),
            (7, vec![r(b + 4096, b + 8192)]),
            (8, vec![r(2 * b, 3 * b)]),
        ]
    );
}

/// The pages of `range` of this process its page tables map.
fn mapped_pages(range: AddrRange) -> u64 {
    let page = memext_sys::page_size();
    let mut pm = Pagemap::open(std::process::id()).expect("own pagemap");
    pm.scan(range)
        .expect("scan")
        .iter()
        .filter(|p| p.state == PageState::Resident)
        .map(|p| p.range.len() / page)
        .sum()
}

#[test]
fn the_brought_back_pages_of_a_refused_block_are_mapped_and_no_others() {
    let page = memext_sys::page_size();
    // Zeroed and large, so mapped afresh and never touched: no page of it is
    // in the page tables until read.
    let buf = vec![0u8; usize::try_from(4 * CHUNK_BYTES).expect("small")];
    let start = (buf.as_ptr() as u64).div_ceil(CHUNK_BYTES) * CHUNK_BYTES;
    let (block, next) = (
        r(start, start + CHUNK_BYTES),
        r(start + CHUNK_BYTES, start + 2 * CHUNK_BYTES),
    );
    let me = std::process::id();
    let back = r(start + 16 * page, start + 48 * page);
    let other = r(next.start, next.start + 32 * page);
    assert_eq!(mapped_pages(block), 0, "a fresh buffer maps nothing");
    let done =
        populate_refused(&[(me, back), (me, other)], &[(me, block)], || false).expect("populate");
    assert_eq!(done.pages, 32);
    assert!(!done.stopped);
    assert_eq!(mapped_pages(back), 32, "the brought-back pages are mapped");
    assert_eq!(mapped_pages(block), 32, "and no other page of the block");
    assert_eq!(
        mapped_pages(other),
        0,
        "nor of a block the kernel did not refuse"
    );
    drop(buf);
}
