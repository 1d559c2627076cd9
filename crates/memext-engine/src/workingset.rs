//! A context's working set: which 2 MiB chunks of each of its processes held
//! resident pages, how often (frequency across snapshots) and how recently.
//! Chunks are ranked multi-queue style: the queue is log2 of the frequency,
//! lowered by one for every `lifetime` since the chunk was last seen; within a
//! queue the most recently seen come first. The ranking orders prefetch
//! (hottest first) and picks what stays when a context is pushed to its floor.

use std::collections::HashMap;
use std::time::Duration;

use crate::Instant;

/// The granule of the working set.
pub const CHUNK_BYTES: u64 = 2 << 20;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct ChunkKey {
    pub pid: u32,
    /// Address / CHUNK_BYTES.
    pub index: u64,
}

impl ChunkKey {
    pub fn start(&self) -> u64 {
        self.index * CHUNK_BYTES
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Heat {
    freq: u32,
    last_seen: Instant,
    /// Resident bytes in the chunk at its last snapshot.
    bytes: u64,
}

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WorkingSet {
    /// Saved as a list: a map keyed by a struct has no JSON form.
    #[serde(with = "chunk_list")]
    chunks: HashMap<ChunkKey, Heat>,
    /// When the last snapshot was taken.
    pub recorded_at: Option<Instant>,
}

impl WorkingSet {
    /// Adds one snapshot of process `pid`: the resident ranges `[start, end)`.
    pub fn record(&mut self, at: Instant, pid: u32, resident: &[(u64, u64)]) {
        let mut per_chunk: HashMap<u64, u64> = HashMap::new();
        for &(start, end) in resident {
            let mut a = start;
            while a < end {
                let idx = a / CHUNK_BYTES;
                let chunk_end = ((idx + 1) * CHUNK_BYTES).min(end);
                *per_chunk.entry(idx).or_default() += chunk_end - a;
                a = chunk_end;
            }
        }
        for (index, bytes) in per_chunk {
            let h = self.chunks.entry(ChunkKey { pid, index }).or_insert(Heat {
                freq: 0,
                last_seen: at,
                bytes: 0,
            });
            if h.freq == 0 || h.last_seen < at {
                h.freq = h.freq.saturating_add(1);
            }
            h.last_seen = at;
            h.bytes = bytes;
        }
        self.recorded_at = Some(at);
    }

    /// Drops the chunks of processes that are gone.
    pub fn retain_pids(&mut self, alive: &[u32]) {
        self.chunks.retain(|k, _| alive.contains(&k.pid));
    }

    /// Resident bytes of the chunks seen in the last snapshot.
    pub fn bytes(&self) -> u64 {
        let Some(at) = self.recorded_at else { return 0 };
        self.chunks
            .values()
            .filter(|h| h.last_seen == at)
            .map(|h| h.bytes)
            .sum()
    }

    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    fn queue(h: &Heat, now: Instant, lifetime: Duration) -> i64 {
        let level = i64::from(32 - h.freq.leading_zeros()); // 1 + floor(log2(freq))
        let age = now.saturating_sub(h.last_seen).as_secs_f64() / lifetime.as_secs_f64().max(1e-9);
        #[allow(clippy::cast_possible_truncation)] // age is finite and small
        let demote = age.floor().min(64.0) as i64;
        (level - demote).max(0)
    }

    /// All chunks, hottest first.
    pub fn ranked(&self, now: Instant, lifetime: Duration) -> Vec<ChunkKey> {
        let mut v: Vec<(&ChunkKey, &Heat)> = self.chunks.iter().collect();
        v.sort_by(|(ka, a), (kb, b)| {
            Self::queue(b, now, lifetime)
                .cmp(&Self::queue(a, now, lifetime))
                .then(b.last_seen.cmp(&a.last_seen))
                .then(ka.cmp(kb))
        });
        v.into_iter().map(|(k, _)| *k).collect()
    }

    /// Forgets all but the `max` hottest chunks (to bound what is saved).
    pub fn keep_hottest(&mut self, now: Instant, lifetime: Duration, max: usize) {
        if self.chunks.len() <= max {
            return;
        }
        let keep: std::collections::HashSet<ChunkKey> =
            self.ranked(now, lifetime).into_iter().take(max).collect();
        self.chunks.retain(|k, _| keep.contains(k));
    }

    /// The processes whose chunks it holds.
    pub fn pids(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self.chunks.keys().map(|k| k.pid).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The hottest chunks holding at least `budget` bytes: what a context
    /// pushed to its floor keeps.
    pub fn hottest(&self, now: Instant, lifetime: Duration, budget: u64) -> Vec<ChunkKey> {
        let mut kept = 0;
        self.ranked(now, lifetime)
            .into_iter()
            .take_while(|k| {
                let take = kept < budget;
                kept += self.chunks[k].bytes;
                take
            })
            .collect()
    }
}

mod chunk_list {
    use std::collections::HashMap;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::{ChunkKey, Heat};

    pub fn serialize<S: Serializer>(m: &HashMap<ChunkKey, Heat>, s: S) -> Result<S::Ok, S::Error> {
        let mut v: Vec<(&ChunkKey, &Heat)> = m.iter().collect();
        v.sort_by_key(|(k, _)| **k);
        v.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<HashMap<ChunkKey, Heat>, D::Error> {
        Ok(Vec::<(ChunkKey, Heat)>::deserialize(d)?
            .into_iter()
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;
    fn s(x: u64) -> Instant {
        Duration::from_secs(x)
    }

    #[test]
    fn ranges_are_split_into_chunks() {
        let mut ws = WorkingSet::default();
        // 1 MiB in chunk 0, then 3 MiB spanning chunks 1 and 2.
        ws.record(s(1), 7, &[(0, MIB), (2 * MIB, 5 * MIB)]);
        assert_eq!(ws.bytes(), 4 * MIB);
        let r = ws.ranked(s(1), Duration::from_secs(60));
        assert_eq!(r.len(), 3);
        assert!(r.iter().all(|k| k.pid == 7));
    }

    #[test]
    fn frequent_and_recent_chunks_rank_first() {
        let mut ws = WorkingSet::default();
        let a = (0, CHUNK_BYTES); // chunk 0: seen in every snapshot
        let b = (CHUNK_BYTES, 2 * CHUNK_BYTES); // chunk 1: only the first
        let c = (2 * CHUNK_BYTES, 3 * CHUNK_BYTES); // chunk 2: only the last
        ws.record(s(0), 1, &[a, b]);
        ws.record(s(10), 1, &[a]);
        ws.record(s(20), 1, &[a]);
        ws.record(s(30), 1, &[a, c]);
        let life = Duration::from_secs(60);
        let order: Vec<u64> = ws.ranked(s(30), life).iter().map(|k| k.index).collect();
        assert_eq!(order, vec![0, 2, 1]);
        // The last snapshot held chunks 0 and 2.
        assert_eq!(ws.bytes(), 2 * CHUNK_BYTES);
        // A budget of one chunk keeps the hottest.
        assert_eq!(
            ws.hottest(s(30), life, CHUNK_BYTES),
            vec![ChunkKey { pid: 1, index: 0 }]
        );
    }

    #[test]
    fn keep_hottest_bounds_the_chunks_to_the_hottest() {
        let mut ws = WorkingSet::default();
        ws.record(s(0), 1, &[(0, 4 * CHUNK_BYTES)]);
        ws.record(s(10), 1, &[(0, CHUNK_BYTES)]); // chunk 0 seen twice
        ws.record(s(10), 2, &[(0, CHUNK_BYTES)]);
        let life = Duration::from_secs(60);
        ws.keep_hottest(s(10), life, 2);
        let kept: Vec<(u32, u64)> = ws
            .ranked(s(10), life)
            .iter()
            .map(|k| (k.pid, k.index))
            .collect();
        assert_eq!(kept, vec![(1, 0), (2, 0)]);
        assert_eq!(ws.pids(), vec![1, 2]);
    }

    #[test]
    fn hottest_stops_at_the_budget_and_gone_pids_are_dropped() {
        let mut ws = WorkingSet::default();
        ws.record(s(0), 1, &[(0, 4 * CHUNK_BYTES)]);
        ws.record(s(0), 2, &[(0, 4 * CHUNK_BYTES)]);
        assert_eq!(
            ws.hottest(s(0), Duration::from_secs(60), 3 * CHUNK_BYTES)
                .len(),
            3
        );
        assert_eq!(ws.hottest(s(0), Duration::from_secs(60), 0).len(), 0);
        ws.retain_pids(&[2]);
        assert_eq!(ws.bytes(), 4 * CHUNK_BYTES);
        assert!(ws
            .ranked(s(0), Duration::from_secs(60))
            .iter()
            .all(|k| k.pid == 2));
    }
}
