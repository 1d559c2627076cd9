//! A second woken context's read-back, beside the first
//! (`daemon.wake_read_back_beside`). The mover reads one job at a time: a
//! wake that came while another wake's read-back ran waited for all of it.
//! In session 75's bench/faas runs, 20-28 wakes a run waited over 10 ms
//! behind another wake's read-back (most 40-70 ms), their functions faulting
//! their heaps in by themselves meanwhile, at some three times the CPU a
//! page that the mover's read takes (12,000 major faults in 100 ms of the
//! handler's CPU against 65 MiB read back in 45 ms); the second of two
//! overlapping cold calls took a median 87-111 ms against 58-66 alone.
//!
//! So, while the mover reads a woken context back, the next woken context's
//! read-back runs on a thread of its own beside it: one at a time there,
//! only where no critical context shares the host (an unpaced read-back;
//! beside a critical context a wake's read-back is paced, and a second
//! reader would take the CPU the pacing keeps for it), holding the wake
//! gate as the mover does.

use std::thread::JoinHandle;

use memext_engine::ContextId;

use super::mover::{count_bring_back, is_wake, read_back, Job, Shared};
use super::priority::MovePriorities;
use super::wake_gate::WakeGate;

/// The mover's second reader: what it needs to run a wake's read-back, and
/// the one it runs.
pub(super) struct Beside {
    stats: Shared,
    gate: WakeGate,
    priorities: MovePriorities,
    running: Option<(ContextId, JoinHandle<()>)>,
}

impl Beside {
    pub(super) fn new(stats: Shared, gate: WakeGate, priorities: MovePriorities) -> Self {
        Self {
            stats,
            gate,
            priorities,
            running: None,
        }
    }

    /// Whether a read-back runs beside the mover now (finished ones are
    /// reaped first: see [`Beside::reap`]).
    pub(super) fn is_running(&mut self, queue: &[Job]) -> bool {
        self.reap(queue);
        self.running.is_some()
    }

    /// Starts the first queued unpaced wake of `queue` (of a context other
    /// than `reading`, the one the mover reads) beside the mover, unless one
    /// runs there already; whether it started one.
    pub(super) fn start_from(&mut self, queue: &mut Vec<Job>, reading: &ContextId) -> bool {
        if self.is_running(queue) {
            return false;
        }
        let Some(at) = queue
            .iter()
            .position(|j| is_wake(j) && is_unpaced(j) && j.key() != reading)
        else {
            return false;
        };
        let job = queue.remove(at);
        let (key, kept) = (job.key().clone(), job.clone());
        let (stats, gate, priorities) = (
            self.stats.clone(),
            self.gate.clone(),
            self.priorities.clone(),
        );
        let spawned = std::thread::Builder::new()
            .name("memext-mover-2".into())
            .spawn(move || {
                let mut said = false;
                priorities.run_next_at(priorities.wake_read_back, "mover's second reader", &mut said);
                let _serving = gate.serve();
                let key = job.key().clone();
                if let Err(e) = read_back(&job, || false).map(|r| count_bring_back(&stats, &key, r)) {
                    tracing::warn!(event = "move-failed", context = %key, "{key}: moving pages: {e}");
                }
            });
        match spawned {
            Ok(h) => {
                tracing::debug!(event = "read-beside", context = %key, "{key}: read back beside another wake's");
                self.running = Some((key, h));
                true
            }
            Err(e) => {
                tracing::warn!("the mover reads one wake at a time: no second reader: {e}");
                queue.insert(at, kept);
                false
            }
        }
    }

    /// Joins a read-back that has ended; its context is no longer busy
    /// unless `queue` holds another job of it.
    fn reap(&mut self, queue: &[Job]) {
        if !self.running.as_ref().is_some_and(|(_, h)| h.is_finished()) {
            return;
        }
        if let Some((key, h)) = self.running.take() {
            h.join().ok();
            if let Ok(mut s) = self.stats.lock() {
                s.entry(key.clone()).or_default().busy = queue.iter().any(|j| *j.key() == key);
            }
        }
    }
}

impl Drop for Beside {
    /// The mover stops: the read-back beside it ends first.
    fn drop(&mut self) {
        if let Some((_, h)) = self.running.take() {
            h.join().ok();
        }
    }
}

/// A job not held to a bandwidth: a wake with no critical context beside it.
fn is_unpaced(job: &Job) -> bool {
    matches!(job, Job::BringBack { bandwidth: 0, .. })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// A bring-back of nothing (no pids): a wake's (`urgent`) or a predicted one.
    fn bring(key: &str, bandwidth: u64, urgent: bool) -> Job {
        Job::BringBack {
            key: key.into(),
            pids: vec![],
            order: vec![],
            bandwidth,
            map_back: false,
            map_kept: false,
            from_the_end: true,
            urgent,
        }
    }
    fn wake(key: &str, bandwidth: u64) -> Job {
        bring(key, bandwidth, true)
    }

    fn keys(q: &[Job]) -> Vec<&str> {
        q.iter().map(|j| j.key().as_str()).collect()
    }

    /// Waits (at most 5 s) until `f` says so.
    fn eventually(mut f: impl FnMut() -> bool) -> bool {
        let t0 = Instant::now();
        while !f() {
            if t0.elapsed() > Duration::from_secs(5) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        true
    }

    #[test]
    fn one_unpaced_wake_of_another_context_is_read_beside_at_a_time() {
        let stats = Shared::default();
        let gate = WakeGate::default();
        let mut beside = Beside::new(stats.clone(), gate.clone(), MovePriorities::default());
        let mut q = vec![
            bring("p", 0, false),
            wake("paced", 512 << 20),
            wake("a", 0),
            wake("b", 0),
            wake("c", 0),
        ];
        for k in ["b", "c"] {
            stats
                .lock()
                .expect("stats")
                .entry(k.into())
                .or_default()
                .busy = true;
        }
        // Held, the read-back beside cannot count what it did: it runs on.
        let held = stats.lock().expect("stats");
        let reading: ContextId = "a".into();
        assert!(beside.start_from(&mut q, &reading), "b is read beside a");
        assert_eq!(keys(&q), ["p", "paced", "a", "c"]);
        assert!(!beside.start_from(&mut q, &reading), "one at a time");
        assert!(eventually(|| gate.serving()), "it holds the wake gate");
        drop(held);
        assert!(eventually(|| !beside.is_running(&q)), "it ends");
        assert!(!gate.serving());
        assert!(
            !stats.lock().expect("stats")[&ContextId::from("b")].busy,
            "its context no longer busy"
        );
        assert!(beside.start_from(&mut q, &reading), "then c");
        assert_eq!(keys(&q), ["p", "paced", "a"]);
        assert!(eventually(|| !beside.is_running(&q)));
        // Left: a predicted read-back, a paced wake, the mover's own context.
        assert!(!beside.start_from(&mut q, &reading));
        assert_eq!(keys(&q), ["p", "paced", "a"]);
    }
}
