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
