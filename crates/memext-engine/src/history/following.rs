//! Co-wakes: how often one context wakes right after another
//! (`ActivationHistory`'s second prediction).

use std::time::Duration;

use super::ActivationHistory;
use crate::Instant;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Following {
    /// Of the leader's wakes the follower could have followed (after its
    /// own first wake, and at least `window` ago), how many it did.
    pub followed: usize,
    pub of: usize,
    /// The chance that the follower wakes within `window` after any given
    /// instant, at its own rate.
    pub chance: f64,
}

impl Following {
    pub fn ratio(&self) -> f64 {
        self.followed as f64 / self.of as f64
    }

    /// How likely following at least this often is by chance alone (the
    /// binomial tail): among a hundred functions that wake every 10-60 s
    /// independently, two in three of a leader's wakes are followed within
    /// 2 s by chance often enough that most co-wake predictions of a
    /// bench/faas run (whose trace has no co-wakes) were read-backs for nothing.
    pub fn by_chance(&self) -> f64 {
        binomial_tail(self.followed, self.of, self.chance)
    }
}

/// `follower`'s following of `leader` within `window`, judged at `now`.
/// `None` until there are at least three leader wakes to judge.
pub fn following(
    leader: &ActivationHistory,
    follower: &ActivationHistory,
    window: Duration,
    now: Instant,
) -> Option<Following> {
    let first = follower.wakes.front().copied()?;
    let candidates: Vec<Instant> = leader
        .wakes()
        .filter(|&w| w + window >= first && w + window <= now)
        .collect();
    if candidates.len() < 3 {
        return None;
    }
    let followed = candidates
        .iter()
        .filter(|&&w| follower.wakes().any(|f| f >= w && f <= w + window))
        .count();
    let span = now.saturating_sub(first).max(window).as_secs_f64();
    let rate = follower.count() as f64 / span;
    Some(Following {
        followed,
        of: candidates.len(),
        chance: 1.0 - (-rate * window.as_secs_f64()).exp(),
    })
}

/// P(X >= k) for X ~ Binomial(n, p).
pub(super) fn binomial_tail(k: usize, n: usize, p: f64) -> f64 {
    let mut choose = 1.0; // C(n, j), from j = 0
    let mut tail = 0.0;
    for j in 0..=n {
        if j > 0 {
            choose = choose * (n + 1 - j) as f64 / j as f64;
        }
        if j >= k {
            let pow = |x: f64, e: usize| x.powi(i32::try_from(e).unwrap_or(i32::MAX));
            tail += choose * pow(p, j) * pow(1.0 - p, n - j);
        }
    }
    tail.min(1.0)
}
