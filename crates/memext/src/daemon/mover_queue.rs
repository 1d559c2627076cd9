//! The mover's queue, shared by its two lanes. A woken context's read-back
//! (urgent: the context waits for it) goes first; the rest (push-outs and
//! predicted read-backs) waits while one is waiting or served. One lane takes
//! any job, the other only wakes: a wake that comes while another's read-back
//! runs starts at once instead of after it (bench/faas, session 59's runs:
//! 9-10 of a run's ~400 woken read-backs waited over 10 ms, up to 120 ms,
//! behind another woken context's).

use std::collections::HashSet;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use memext_engine::ContextId;

use super::mover::{Job, Shared};

/// Which jobs a lane takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lane {
    Any,
    Wakes,
}

#[derive(Default)]
pub(super) struct Queue {
    pub(super) waiting: Vec<Job>,
    /// Contexts a lane is moving pages of (one lane a context).
    running: HashSet<ContextId>,
    /// Woken contexts' read-backs under way.
    wakes_served: usize,
    closed: bool,
}

/// The queue and the lanes' wake-up.
#[derive(Default)]
pub(super) struct Jobs {
    queue: Mutex<Queue>,
    ready: Condvar,
}

impl Jobs {
    pub(super) fn lock(&self) -> MutexGuard<'_, Queue> {
        // A lane that panicked left the queue as it was: go on with it.
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues `job`, its context marked busy in `stats` (under the queue's
    /// lock, as `done` clears it: neither misses the other).
    pub(super) fn submit(&self, job: Job, stats: &Shared) {
        let mut q = self.lock();
        if let Ok(mut s) = stats.lock() {
            s.entry(job.key().clone()).or_default().busy = true;
        }
        enqueue(&mut q.waiting, job);
        drop(q);
        self.ready.notify_all();
    }

    /// The next job for `lane`, marked running; `None` once closed.
    pub(super) fn take(&self, lane: Lane) -> Option<Job> {
        let mut q = self.lock();
        loop {
            if q.closed {
                return None;
            }
            if let Some(job) = q.next(lane) {
                return Some(job);
            }
            q = self
                .ready
                .wait_timeout(q, Duration::from_millis(200))
                .map(|(q, _)| q)
                .unwrap_or_else(|e| e.into_inner().0);
        }
    }

    /// The job for `key` ended: its context stays busy in `stats` while
    /// another of its jobs waits.
    pub(super) fn done(&self, key: &ContextId, urgent: bool, stats: &Shared) {
        let mut q = self.lock();
        let busy = q.finish(key, urgent);
        if let Ok(mut s) = stats.lock() {
            s.entry(key.clone()).or_default().busy = busy;
        }
        drop(q);
        self.ready.notify_all();
    }

    pub(super) fn close(&self) {
        self.lock().closed = true;
        self.ready.notify_all();
    }
}

impl Queue {
    /// Takes the first job `lane` may run: a wake's of a context no lane is
    /// moving; for `Lane::Any` also anything else once no wake waits or is
    /// served.
    pub(super) fn next(&mut self, lane: Lane) -> Option<Job> {
        let quiet = self.wakes_served == 0 && !self.waiting.iter().any(is_wake);
        let at = self.waiting.iter().position(|j| {
            !self.running.contains(j.key()) && (is_wake(j) || (lane == Lane::Any && quiet))
        })?;
        let job = self.waiting.remove(at);
        self.running.insert(job.key().clone());
        if is_wake(&job) {
            self.wakes_served += 1;
        }
        Some(job)
    }

    /// The job of `key` ended; returns whether another of its jobs waits.
    fn finish(&mut self, key: &ContextId, urgent: bool) -> bool {
        self.running.remove(key);
        if urgent {
            self.wakes_served = self.wakes_served.saturating_sub(1);
        }
        self.waiting.iter().any(|j| j.key() == key)
    }

    /// Whether the bring-back of `key` under way stops here: for a newer
    /// bring-back of its own context, or, a predicted one (not `urgent`),
    /// while a woken context's waits or is served.
    pub(super) fn bring_back_gives_way(&self, key: &ContextId, urgent: bool) -> bool {
        self.waiting.iter().any(|j| brings_back(j, key)) || (!urgent && self.wakes_pending())
    }

    /// Whether a push-out of `key` under way stops here: for any bring-back,
    /// or another job of its own context (the daemon pushes again later if
    /// the context is still idle).
    pub(super) fn push_out_gives_way(&self, key: &ContextId) -> bool {
        self.wakes_pending()
            || self
                .waiting
                .iter()
                .any(|j| matches!(j, Job::BringBack { .. }) || j.key() == key)
    }

    /// Whether a bring-back for `key` waits.
    pub(super) fn brings_back(&self, key: &ContextId) -> bool {
        self.waiting.iter().any(|j| brings_back(j, key))
    }

    fn wakes_pending(&self) -> bool {
        self.wakes_served > 0 || self.waiting.iter().any(is_wake)
    }
}

pub(super) fn is_wake(job: &Job) -> bool {
    matches!(job, Job::BringBack { urgent: true, .. })
}

fn brings_back(job: &Job, key: &ContextId) -> bool {
    matches!(job, Job::BringBack { .. }) && job.key() == key
}

/// Queues a job. A bring-back cancels the push-outs of its context; one for
/// a wake (urgent) goes before every push-out and predicted bring-back, a
/// predicted one after the push-outs already queued: those make the room it
/// was planned into (read back first, it lands in a full cgroup whose limit
/// reclaims the least recently used pages: its own, just read).
pub(super) fn enqueue(queue: &mut Vec<Job>, job: Job) {
    if let Job::BringBack { key, urgent, .. } = &job {
        queue.retain(|j| !(matches!(j, Job::PushOut { .. }) && j.key() == key));
        if *urgent {
            resume(queue, job);
            return;
        }
    }
    queue.push(job);
}

/// Puts a job after the wakes' bring-backs, before everything else: a wake,
/// or a predicted bring-back that gave way to one (it was under way).
pub(super) fn resume(queue: &mut Vec<Job>, job: Job) {
    let at = queue
        .iter()
        .position(|j| !is_wake(j))
        .unwrap_or(queue.len());
    queue.insert(at, job);
}

#[cfg(test)]
#[path = "mover_queue_tests.rs"]
mod tests;
