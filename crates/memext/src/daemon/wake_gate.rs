//! While the mover reads a woken context back, the reclaimer's lowerings
//! that no wake waits for wait. Room made beside a cold call takes the CPU
//! and the TLBs the call needs: `memext-e2e coldcall` on zram (a 64 MiB
//! heap read back into room while 64 MiB of another cgroup was paged out
//! beside it) took 1.32-1.70x the call alone at nice 0 and 1.05-1.31x at
//! nice 19, in three invocations; in a bench/faas run, 236 of 304 cold
//! calls had the reclaimer lowering another function's limit beside them
//! (12.9 s of its 27.6 s of reclaim in the trace). A lowering a wake waits
//! for (urgent, or hurried) does not wait, and none waits longer than the
//! reclaimer allows it. A lowering yields where the engine says
//! (`Command::Reclaim::yields`: contexts pushed out only when needed,
//! whose wakes read into the room the plan keeps free for them), or every
//! one or none as `daemon.yield_to_wakes` says. Alone, without that room,
//! the room was made later, and in bench/faas the predicted calls of its
//! timer functions were slower in four of four A/B pairs (session 37).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often a waiting lowering looks at the gate again.
const LOOK_EVERY: Duration = Duration::from_millis(2);

/// Shared by the mover (which holds it while it serves a wake) and the
/// reclaimer (which waits at it).
#[derive(Clone, Default)]
pub struct WakeGate(Arc<AtomicU32>);

/// Held while a wake's read-back runs; the gate opens when the last is dropped.
pub struct Serving(Arc<AtomicU32>);

impl Drop for Serving {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl WakeGate {
    /// A wake is being served until the guard is dropped.
    pub fn serve(&self) -> Serving {
        self.0.fetch_add(1, Ordering::Relaxed);
        Serving(self.0.clone())
    }

    pub fn serving(&self) -> bool {
        self.0.load(Ordering::Relaxed) > 0
    }

    /// Waits while a wake is served, at most `budget`, and not once `go_on`
    /// says so (a wake came to wait for this lowering). Returns the time waited.
    pub fn wait_out(&self, budget: Duration, go_on: impl Fn() -> bool) -> Duration {
        let t0 = Instant::now();
        while self.serving() && t0.elapsed() < budget && !go_on() {
            std::thread::sleep(LOOK_EVERY);
        }
        t0.elapsed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gate_is_closed_while_any_wake_is_served_and_waits_end_at_their_budget() {
        let g = WakeGate::default();
        assert!(!g.serving());
        assert!(
            g.wait_out(Duration::from_secs(5), || false) < Duration::from_millis(100),
            "open: no wait"
        );
        let a = g.serve();
        let b = g.clone().serve();
        drop(a);
        assert!(g.serving(), "one still served");
        let waited = g.wait_out(Duration::from_millis(30), || false);
        assert!(waited >= Duration::from_millis(30), "{waited:?}");
        assert!(
            g.wait_out(Duration::from_secs(5), || true) < Duration::from_secs(1),
            "a wake waits for it"
        );
        drop(b);
        assert!(!g.serving());
    }
}
