//! The most a context had in one stretch of activity (from a wake or an
//! onset to the next), learned: what admission waits for where its class
//! admits at the peak (`admit_at_peak`).
//!
//! A batch job that allocates its heap over a ramp holds little when it
//! starts: admitted for what it holds, every job of bench/peers' grow cells
//! got in, and the twelve grew together past the room (341 MiB each, room
//! for about four), each reclaiming its own pages at its share of it
//! (323-743k TLB shootdowns a run against 51-76 in ideal; 0-5 jobs ended a
//! window against 17). Its last stretch's peak says what it will need.
//!
//! All it has counts (charged and in swap): a job squeezed at its limit
//! still needs its whole heap.

/// The peak of the current stretch, and what the earlier ones leave.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Peak {
    /// What the earlier stretches leave: the last one's peak, or half of
    /// what they left before, whichever is more (a context whose stretches
    /// grew smaller waits for less, a stretch at a time).
    before: u64,
    /// The most it had in the current stretch so far.
    current: u64,
    /// When the current stretch began (0: before memext saw one begin).
    #[serde(default)]
    began: crate::Instant,
}

impl Peak {
    /// Nothing seen yet, its first stretch begun at `at`.
    pub fn begun(at: crate::Instant) -> Self {
        Self {
            began: at,
            ..Self::default()
        }
    }

    /// A reading of all it has now (charged and in swap).
    pub fn observe(&mut self, has: u64) {
        self.current = self.current.max(has);
    }

    /// A stretch of activity begins at `at` (a wake or an onset), with
    /// `has` now.
    pub fn begin(&mut self, at: crate::Instant, has: u64) {
        self.before = self.current.max(self.before / 2);
        self.current = has;
        self.began = at;
    }

    /// When the current stretch began: the order contexts admitted at the
    /// peak run in.
    pub fn began(&self) -> crate::Instant {
        self.began
    }

    /// What it is expected to need in this stretch: the most the earlier
    /// ones leave or this one has had (0: nothing seen).
    pub fn expected(&self) -> u64 {
        self.before.max(self.current)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;
    const S: crate::Instant = crate::Instant::ZERO;

    #[test]
    fn a_job_that_freed_its_heap_is_expected_to_need_it_again() {
        let mut p = Peak::default();
        assert_eq!(p.expected(), 0);
        p.begin(S, 10 * MIB);
        for mib in [50, 170, 341, 341, 12] {
            p.observe(mib * MIB);
        }
        // The next job starts small: its last one's peak stands.
        p.begin(S, 16 * MIB);
        assert_eq!(p.expected(), 341 * MIB);
        p.observe(40 * MIB);
        assert_eq!(p.expected(), 341 * MIB);
    }

    #[test]
    fn stretches_that_grow_smaller_wait_for_less_one_at_a_time() {
        let mut p = Peak::default();
        p.begin(S, 0);
        p.observe(400 * MIB);
        p.begin(S, 0);
        p.observe(20 * MIB);
        p.begin(S, 0);
        // The 20 MiB stretch leaves half of the 400 MiB one's.
        assert_eq!(p.expected(), 200 * MIB);
        p.observe(20 * MIB);
        p.begin(S, 0);
        assert_eq!(p.expected(), 100 * MIB);
        // A stretch larger than what is left raises it at once.
        p.observe(300 * MIB);
        assert_eq!(p.expected(), 300 * MIB);
    }
}
