//! The mover: a thread that moves pages between DRAM and the slower tiers for
//! the daemon, so that the daemon's loop never blocks on it. Bring-back jobs
//! go before push-outs; a bring-back for a context cancels its push-out; both
//! are paced to a bandwidth cap, in batches, and report what they moved.

use std::collections::{HashMap, HashSet};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use memext_engine::workingset::ChunkKey;
use memext_engine::ContextId;
use memext_sys::madvise::Advice;
use memext_sys::pagemap::PageState;
use memext_sys::AddrRange;

use super::mover_map::{map_chunks_back, map_kept_back};
use super::paced::{advise_paced, populate_paced, Paced, Populated};
use super::pages::{by_chunk, ranges_of, read_back_ranges};
use super::priority::MovePriorities;
use super::wake_gate::WakeGate;

#[derive(Debug, Clone)]
pub enum Job {
    /// Page out the resident private anonymous memory of `pids`, except the
    /// chunks in `keep`.
    PushOut {
        key: ContextId,
        pids: Vec<u32>,
        keep: HashSet<ChunkKey>,
        bandwidth: u64,
    },
    /// Bring back the swapped memory of `pids`: their anonymous memory,
    /// chunks in `order` first (hottest first), the rest by address; then,
    /// unless `urgent`, the pages they wrote of their private file mappings.
    BringBack {
        key: ContextId,
        pids: Vec<u32>,
        order: Vec<ChunkKey>,
        bandwidth: u64,
        /// Then map the chunks of `order` (MADV_COLLAPSE), for a predicted wake.
        map_back: bool,
        /// And then every 2 MiB block of `pids` held whole (`map_kept_back`).
        map_kept: bool,
        /// Read back in the reverse order, coldest and last first: for a context
        /// already faulting its hottest pages in by itself from a synchronous
        /// tier (zram), where both would otherwise decompress the same pages.
        from_the_end: bool,
        /// A woken context waits for it: done at the daemon's own priority,
        /// not the mover's low one.
        urgent: bool,
    },
}

impl Job {
    fn key(&self) -> &ContextId {
        match self {
            Job::PushOut { key, .. } | Job::BringBack { key, .. } => key,
        }
    }
}

/// What the mover has done for one context.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct MoveStats {
    pub pushed_out_pages: u64,
    pub brought_back_pages: u64,
    /// Pages of chunks memext mapped back as huge pages before a predicted wake.
    pub mapped_back_pages: u64,
    /// A job for this context is queued or running.
    pub busy: bool,
    /// Faults the mover took in the context's processes mapping their pages
    /// from outside, (all, major) as its cgroup counts them, not yet handed to the engine
    /// (`Mover::take_faults_caused`): the kernel counts them to the context.
    pub faults_caused: (u64, u64),
    /// The ranges of the last bring-back and when it ended (for accuracy).
    #[serde(skip)]
    pub last_bring_back: Option<(Instant, Vec<(u32, AddrRange)>)>,
}

pub type Shared = Arc<Mutex<HashMap<ContextId, MoveStats>>>;

pub struct Mover {
    tx: Sender<Job>,
    pub stats: Shared,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Mover {
    /// `gate` is held while a woken context is read back (`wake_gate`);
    /// each job runs at its priority of `priorities`.
    pub fn start(gate: WakeGate, priorities: MovePriorities) -> Self {
        let (tx, rx) = std::sync::mpsc::channel();
        let stats: Shared = Arc::default();
        let s = stats.clone();
        let handle = std::thread::Builder::new()
            .name("memext-mover".into())
            .spawn(move || run(&rx, &s, &gate, priorities))
            .expect("spawning the mover thread");
        Self {
            tx,
            stats,
            handle: Some(handle),
        }
    }

    pub fn submit(&self, job: Job) {
        if let Ok(mut s) = self.stats.lock() {
            s.entry(job.key().clone()).or_default().busy = true;
        }
        // The receiver lives as long as the mover thread, which outlives us.
        self.tx.send(job).ok();
    }

    /// The faults the mover caused in `key`'s processes since the last call
    /// (`MoveStats::faults_caused`), for the engine to leave out.
    pub fn take_faults_caused(&self, key: &ContextId) -> (u64, u64) {
        self.stats
            .lock()
            .ok()
            .and_then(|mut s| s.get_mut(key).map(|m| std::mem::take(&mut m.faults_caused)))
            .unwrap_or_default()
    }

    pub fn is_busy(&self, key: &ContextId) -> bool {
        self.stats
            .lock()
            .map(|s| s.get(key).is_some_and(|m| m.busy))
            .unwrap_or(false)
    }

    /// Drops the entries of contexts `keep` no longer names, once idle (the
    /// daemon's tick passes the engine's contexts: a context that left is
    /// forgotten within a tick).
    pub fn retain(&self, keep: impl Fn(&ContextId) -> bool) {
        if let Ok(mut s) = self.stats.lock() {
            s.retain(|k, m| m.busy || keep(k));
        }
    }

    /// Stops the thread after the job in progress (queued jobs are dropped).
    pub fn stop(mut self) {
        let (tx, _) = std::sync::mpsc::channel();
        drop(std::mem::replace(&mut self.tx, tx));
        if let Some(h) = self.handle.take() {
            h.join().ok();
        }
    }
}

fn run(rx: &Receiver<Job>, stats: &Shared, gate: &WakeGate, priorities: MovePriorities) {
    let mut said = false;
    let mut queue: Vec<Job> = Vec::new();
    loop {
        // Take everything waiting; bring-backs first, a bring-back cancels a
        // queued push-out of the same context.
        loop {
            match rx.recv_timeout(if queue.is_empty() {
                Duration::from_millis(200)
            } else {
                Duration::ZERO
            }) {
                Ok(j) => enqueue(&mut queue, j),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
        if queue.is_empty() {
            continue;
        }
        let job = queue.remove(0);
        let key = job.key().clone();
        let urgent = is_wake(&job);
        let priority = if urgent {
            priorities.wake_read_back
        } else {
            priorities.background
        };
        priorities.run_next_at(priority, "mover", &mut said);
        let serving = urgent.then(|| gate.serve());
        let result = match &job {
            Job::BringBack { .. } => match run_bring_back(&job, rx, &mut queue, stats) {
                // A predicted read-back that gave way to a woken context's
                // goes on after it (and after any other wake's), from what is
                // still in swap; one a newer bring-back of its own context
                // replaced is dropped.
                Ok(true) if !queue.iter().any(|j| brings_back(j, &key)) => {
                    tracing::debug!(event = "gave-way", context = %key, "{key}: read-back paused for a wake");
                    resume(&mut queue, job);
                    Ok(())
                }
                r => r.map(|_| ()),
            },
            Job::PushOut {
                pids,
                keep,
                bandwidth,
                ..
            } => push_out(pids, keep, *bandwidth, rx, &mut queue, &key).map(|pages| {
                if let Ok(mut s) = stats.lock() {
                    s.entry(key.clone()).or_default().pushed_out_pages += pages;
                }
            }),
        };
        drop(serving);
        if let Err(e) = result {
            tracing::warn!(event = "move-failed", context = %key, "{key}: moving pages: {e}");
        }
        if let Ok(mut s) = stats.lock() {
            s.entry(key.clone()).or_default().busy = queue.iter().any(|j| *j.key() == key);
        }
    }
}

/// Runs a bring-back job (read back, then the map-backs it asks for) and
/// counts what it moved. Returns whether it stopped early (`gives_way`).
fn run_bring_back(
    job: &Job,
    rx: &Receiver<Job>,
    queue: &mut Vec<Job>,
    stats: &Shared,
) -> Result<bool, String> {
    let Job::BringBack {
        key,
        pids,
        order,
        bandwidth,
        map_back,
        map_kept,
        from_the_end,
        urgent,
    } = job
    else {
        return Ok(false);
    };
    let urgent = *urgent;
    let (read, mut faults) =
        bring_back(pids, order, *bandwidth, *from_the_end, !urgent, key, || {
            gives_way(rx, queue, key, urgent)
        })?;
    let (mut mapped, mut ranges, mut stopped) = (0, read.done, read.stopped);
    if *map_back && !stopped {
        let m = map_chunks_back(key, pids, order, ranges, || {
            gives_way(rx, queue, key, urgent)
        })?;
        (mapped, ranges, stopped) = (m.pages, m.rest, m.stopped);
        faults = (faults.0 + m.faults.0, faults.1 + m.faults.1);
    }
    if *map_back && *map_kept && !stopped {
        let m = map_kept_back(key, pids, ranges, || gives_way(rx, queue, key, urgent))?;
        (mapped, ranges, stopped) = (mapped + m.pages, m.rest, m.stopped);
    }
    if let Ok(mut s) = stats.lock() {
        let m = s.entry(key.clone()).or_default();
        m.brought_back_pages += read.pages;
        m.mapped_back_pages += mapped;
        m.faults_caused.0 += faults.0;
        m.faults_caused.1 += faults.1;
        if !stopped {
            m.last_bring_back = Some((Instant::now(), ranges));
        }
    }
    Ok(stopped)
}

/// Takes the jobs sent meanwhile into `queue`, and says whether the
/// bring-back of `key` under way gives way: to a newer bring-back of its own
/// context, or, a predicted one (not `urgent`), to a woken context's.
fn gives_way(rx: &Receiver<Job>, queue: &mut Vec<Job>, key: &ContextId, urgent: bool) -> bool {
    take_sent(rx, queue);
    queue
        .iter()
        .any(|j| brings_back(j, key) || (!urgent && is_wake(j)))
}

/// Queues the jobs sent since the last look.
fn take_sent(rx: &Receiver<Job>, queue: &mut Vec<Job>) {
    while let Ok(j) = rx.try_recv() {
        enqueue(queue, j);
    }
}

/// A woken context's read-back: the context waits for it.
fn is_wake(job: &Job) -> bool {
    matches!(job, Job::BringBack { urgent: true, .. })
}

fn brings_back(job: &Job, key: &ContextId) -> bool {
    matches!(job, Job::BringBack { .. }) && job.key() == key
}

/// Puts a job after the woken contexts' bring-backs, before everything else:
/// a wake, or a predicted bring-back that gave way to one (it was under way).
fn resume(queue: &mut Vec<Job>, job: Job) {
    let at = queue
        .iter()
        .position(|j| !is_wake(j))
        .unwrap_or(queue.len());
    queue.insert(at, job);
}

/// Queues a job. A bring-back cancels the push-outs of its context; one for
/// a wake (urgent) goes before every push-out and predicted bring-back, a
/// predicted one after the push-outs already queued: those make the room it
/// was planned into (read back first, it lands in a full cgroup whose limit
/// reclaims the least recently used pages: its own, just read).
fn enqueue(queue: &mut Vec<Job>, job: Job) {
    if let Job::BringBack { key, urgent, .. } = &job {
        queue.retain(|j| !(matches!(j, Job::PushOut { .. }) && j.key() == key));
        if *urgent {
            resume(queue, job);
            return;
        }
    }
    queue.push(job);
}

/// Reads back the swapped memory of `pids`, chunks of `order` first (or
/// from the end); stops between batches when `stop` says so. Returns also
/// the faults it took reading written file pages (the kernel counts them to
/// the context).
fn bring_back(
    pids: &[u32],
    order: &[ChunkKey],
    bandwidth: u64,
    from_the_end: bool,
    written_too: bool,
    key: &ContextId,
    mut stop: impl FnMut() -> bool,
) -> Result<(Paced, (u64, u64)), String> {
    let rank: HashMap<ChunkKey, usize> = order.iter().enumerate().map(|(i, k)| (*k, i)).collect();
    let (mut work, mut files) = (Vec::new(), Vec::new());
    let mut shared = 0u64;
    for &pid in pids {
        let back = read_back_ranges(pid)?;
        files.push((pid, back.written_file));
        let mut pieces = by_chunk(pid, &back.swapped);
        // Shared memory: pagemap does not say what is in swap; the recorded
        // working set's chunks of it that are not resident are asked for.
        let absent: Vec<_> = by_chunk(pid, &back.shared_absent)
            .into_iter()
            .filter(|(k, _)| rank.contains_key(k))
            .collect();
        shared += absent.iter().map(|(_, r)| r.len()).sum::<u64>();
        pieces.extend(absent);
        pieces.sort_by_key(|(k, r)| (rank.get(k).copied().unwrap_or(usize::MAX), r.start));
        if from_the_end {
            pieces.reverse();
        }
        work.push((pid, pieces.into_iter().map(|(_, r)| r).collect::<Vec<_>>()));
    }
    let t0 = Instant::now();
    let mut paced = advise_paced(&work, Advice::WillNeed, bandwidth, &mut stop)?;
    // Then, ahead of a call (not for a woken context, whose heap comes
    // first and whose runtime faults them itself), the pages they wrote of
    // their libraries' data (a few hundred of an interpreter's, touched by
    // every call): WILLNEED cannot read them.
    let mut written = Populated::default();
    if written_too && !paced.stopped {
        written = populate_paced(&files, bandwidth, &mut stop)?;
        paced.stopped = written.stopped;
    }
    paced.pages += written.pages;
    let (bytes, seconds) = (
        paced.pages * memext_sys::page_size(),
        t0.elapsed().as_secs_f64(),
    );
    // Of the shared memory asked for, only what was in swap is read.
    let shared = shared.min(bytes);
    tracing::info!(
        event = "read-back",
        context = %key,
        bytes,
        shared_bytes = shared,
        written_file_bytes = written.pages * memext_sys::page_size(),
        written_file_faults = written.faults.0,
        seconds,
        gave_way = paced.stopped,
        "{key}: read back {} in {seconds:.3} s{}",
        crate::units::human_bytes(bytes),
        if shared > 0 {
            format!(
                " ({} of it shared memory asked for)",
                crate::units::human_bytes(shared)
            )
        } else {
            String::new()
        },
    );
    Ok((paced, written.faults))
}

fn push_out(
    pids: &[u32],
    keep: &HashSet<ChunkKey>,
    bandwidth: u64,
    rx: &Receiver<Job>,
    queue: &mut Vec<Job>,
    key: &ContextId,
) -> Result<u64, String> {
    let mut work = Vec::new();
    for &pid in pids {
        let cold: Vec<AddrRange> = by_chunk(pid, &ranges_of(pid, PageState::Resident)?)
            .into_iter()
            .filter(|(k, _)| !keep.contains(k))
            .map(|(_, r)| r)
            .collect();
        work.push((pid, cold));
    }
    // A push-out yields to any bring-back: stop, let it run, and the daemon
    // pushes again later if the context is still idle.
    advise_paced(&work, Advice::PageOut, bandwidth, || {
        take_sent(rx, queue);
        queue
            .iter()
            .any(|j| matches!(j, Job::BringBack { .. }) || j.key() == key)
    })
    .map(|p| p.pages)
}

#[cfg(test)]
#[path = "mover_tests.rs"]
mod tests;
