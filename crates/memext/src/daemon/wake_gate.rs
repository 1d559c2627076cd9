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
//!
//! Where the capacity is a cgroup's limit (`daemon.capacity_cgroup`) the
//! gate also watches how often a charge meets it: once one does while a
//! wake is read back, the room the wake reads into is gone, and its reads
//! and faults reclaim at the cap themselves, in the woken task, one page
//! compressed for each read back. A lowering waiting then only moves that
//! work into the call, so the wait ends there (`Waited::cap_met`). In
//! session 53's 22 bench/faas runs the charges at the cap in a run went
//! with its p99: 22-58 thousand in the four runs under 215 ms, 146-251
//! thousand in the four over 440 ms.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use memext_cgroup::AnyCgroup;

/// How often a waiting lowering looks at the gate again.
const LOOK_EVERY: Duration = Duration::from_millis(2);

/// Shared by the mover (which holds it while it serves a wake) and the
/// reclaimer (which waits at it).
#[derive(Clone, Default)]
pub struct WakeGate {
    serving: Arc<AtomicU32>,
    /// The cgroup whose limit is the capacity: a charge meeting it ends
    /// every wait.
    cap: Option<Arc<AnyCgroup>>,
}

/// Held while a wake's read-back runs; the gate opens when the last is dropped.
pub struct Serving(Arc<AtomicU32>);

impl Drop for Serving {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// How a wait at the gate ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Waited {
    pub took: Duration,
    /// A charge met the capacity cgroup's limit while it waited.
    pub cap_met: bool,
}

impl WakeGate {
    /// A gate that also ends waits when a charge meets `cap`'s limit.
    pub fn watching_cap(cap: AnyCgroup) -> Self {
        Self {
            serving: Arc::default(),
            cap: Some(Arc::new(cap)),
        }
    }

    /// A wake is being served until the guard is dropped.
    pub fn serve(&self) -> Serving {
        self.serving.fetch_add(1, Ordering::Relaxed);
        Serving(self.serving.clone())
    }

    pub fn serving(&self) -> bool {
        self.serving.load(Ordering::Relaxed) > 0
    }

    /// Charges that met the cap so far (none watched, or unreadable: None).
    fn cap_hits(&self) -> Option<u64> {
        self.cap.as_ref().and_then(|c| c.limit_hits().ok())
    }

    /// Waits while a wake is served, at most `budget`, and not once `go_on`
    /// says so (a wake came to wait for this lowering) or a charge meets
    /// the cap. The cap is read only while the gate is closed.
    pub fn wait_out(&self, budget: Duration, go_on: impl Fn() -> bool) -> Waited {
        let t0 = Instant::now();
        let hits0 = if self.serving() {
            self.cap_hits()
        } else {
            None
        };
        let mut cap_met = false;
        while !cap_met && self.serving() && t0.elapsed() < budget && !go_on() {
            std::thread::sleep(LOOK_EVERY);
            cap_met = hits0
                .zip(self.cap_hits())
                .is_some_and(|(was, now)| now > was);
        }
        Waited {
            took: t0.elapsed(),
            cap_met,
        }
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
            g.wait_out(Duration::from_secs(5), || false).took < Duration::from_millis(100),
            "open: no wait"
        );
        let a = g.serve();
        let b = g.clone().serve();
        drop(a);
        assert!(g.serving(), "one still served");
        let waited = g.wait_out(Duration::from_millis(30), || false);
        assert!(waited.took >= Duration::from_millis(30), "{waited:?}");
        assert!(!waited.cap_met, "no cap watched");
        assert!(
            g.wait_out(Duration::from_secs(5), || true).took < Duration::from_secs(1),
            "a wake waits for it"
        );
        drop(b);
        assert!(!g.serving());
    }

    /// A fake v1 capacity cgroup `/cap` with its `memory.failcnt`.
    fn fake_cap(dir: &std::path::Path) -> AnyCgroup {
        let (h, cap) = crate::daemon::reclaim::tests::fake_v1(dir, "cap");
        std::fs::write(dir.join("cap/memory.failcnt"), "100\n").expect("failcnt");
        h.open(&cap).expect("open")
    }

    #[test]
    fn a_wait_ends_when_a_charge_meets_the_cap_and_not_before() {
        let dir = tempfile::tempdir().expect("tempdir");
        let g = WakeGate::watching_cap(fake_cap(dir.path()));
        let _serving = g.serve();
        let waited = g.wait_out(Duration::from_millis(40), || false);
        assert!(!waited.cap_met, "the count stood still");
        assert!(waited.took >= Duration::from_millis(40), "{waited:?}");

        let failcnt = dir.path().join("cap/memory.failcnt");
        let meet = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            std::fs::write(failcnt, "101\n").expect("failcnt");
        });
        let waited = g.wait_out(Duration::from_secs(5), || false);
        meet.join().expect("writer");
        assert!(waited.cap_met, "{waited:?}");
        assert!(waited.took < Duration::from_secs(2), "{waited:?}");

        // An unreadable counter watches nothing: the wait runs its budget.
        std::fs::remove_file(dir.path().join("cap/memory.failcnt")).expect("rm");
        let waited = g.wait_out(Duration::from_millis(20), || false);
        assert!(!waited.cap_met && waited.took >= Duration::from_millis(20));
    }
}
