//! The reclaimer: a thread that lowers memory limits below what a context
//! uses, for the daemon. Such a write makes the kernel reclaim the
//! difference in the writing thread (v1 `mem_cgroup_resize_max`, v2
//! `memory_high_write`); in the daemon's loop those writes held it 4.4-5.3 s
//! per bench/peers invocation at nice 0, up to 530 ms at a time, while
//! wakes waited to be served. Here a limit goes down in steps of [`STEP`]
//! at nice 19 (at the daemon's priority when a wake waits for the room;
//! all SCHED_IDLE with `daemon.move_priority = "idle"`, see `priority`),
//! and a job is stopped between two steps when its context's limit is to
//! be written again. A lowering that yields (`Job::yields`) and no wake
//! waits for waits (at most [`YIELD_AT_MOST`] a job) while the mover reads
//! a woken context back (`wake_gate`).
//!
//! Must not: touch the ledger or decide. The actuator records a lowering
//! before it is handed here and settles it from what the knob holds after.

use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use memext_cgroup::{AnyCgroup, CgroupPath, Hierarchy, Limit, LimitKnob, MemoryCgroup};
use memext_engine::ContextId;
use memext_sys::madvise::Advice;
use memext_sys::pagemap::PageState;
use memext_sys::sched::Priority;

use super::paced::advise_paced;
use super::pages::ranges_of;
use super::priority::MovePriorities;
use super::wake_gate::WakeGate;

/// How far one write lowers a limit: the reclaim it costs is the longest a
/// stop waits (8 MiB took 3-10 ms of reclaim at nice 0 here).
pub const STEP: u64 = 8 << 20;
/// The longest a lowering no wake waits for waits, in all, for the wakes
/// being read back (a bench/faas cold call's read-back took 30-150 ms).
pub const YIELD_AT_MOST: Duration = Duration::from_millis(300);

/// A limit to lower from `from` down to `to`.
#[derive(Debug, Clone)]
pub struct Job {
    pub id: ContextId,
    pub path: CgroupPath,
    pub knob: LimitKnob,
    pub from: u64,
    pub to: u64,
    /// A wake waits for this room: at the daemon's priority.
    pub urgent: bool,
    /// The context rests: where the reclaimer pages out first
    /// (`Shared::page_out_first`), it may. An active context's memory is
    /// left to the limit steps: the kernel's reclaim takes its coldest
    /// pages first, a page-out by address would take pages in use.
    pub page_out: bool,
    /// Unless urgent, it waits while a woken context is read back, at most
    /// `YIELD_AT_MOST` (`wake_gate`).
    pub yields: bool,
    /// Once `to` is written, the limit is left at this value (`to` or
    /// above it): room for charges after the reclaim (see
    /// `act::V1_CHARGE_ROOM`).
    pub leave_at: u64,
}

/// How a job ended.
#[derive(Debug, Clone)]
pub struct Ended {
    pub id: ContextId,
    pub knob: LimitKnob,
    pub to: u64,
    /// The last value written (`from` if none was).
    pub reached: u64,
    pub steps: u32,
    pub took: Duration,
    /// Why it stopped short of `to`: the kernel refused a step (v1: it
    /// cannot reclaim that far), or the cgroup went away.
    pub error: Option<String>,
    /// Stopped by [`Reclaimer::stop_job`] (already settled by the caller).
    pub stopped: bool,
    /// A wake waited for it.
    pub urgent: bool,
    /// Bytes paged out before the limit steps (`Shared::page_out_first`).
    pub paged_out: u64,
    /// A step was refused and the limit given a step of room back
    /// (`step_down`): `reached` is that value.
    pub relaxed: bool,
    /// How long it waited for wakes being read back (`wake_gate`).
    pub yielded: Duration,
}

impl Ended {
    /// A job that wrote nothing yet: its limit where it began.
    pub fn begun(job: &Job) -> Self {
        Self {
            id: job.id.clone(),
            knob: job.knob,
            to: job.to,
            reached: job.from,
            steps: 0,
            took: Duration::ZERO,
            error: None,
            stopped: false,
            urgent: job.urgent,
            paged_out: 0,
            relaxed: false,
            yielded: Duration::ZERO,
        }
    }
}

#[derive(Default)]
struct State {
    queue: VecDeque<Job>,
    running: Option<ContextId>,
    stop: HashSet<ContextId>,
    ended: Vec<Ended>,
    closing: bool,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
    /// Held while a step is written: a stop waits for it, never longer.
    step: Mutex<()>,
    /// The thread's id, to lend it the daemon's priority while a stop waits.
    tid: AtomicI32,
    /// Each job pages its context's memory out with `process_madvise` down
    /// to its target before the limit steps: the kernel's reclaim at the
    /// limit then has little left to do (`page_out_to`).
    page_out_first: bool,
    /// Closed while the mover reads a woken context back.
    gate: WakeGate,
    /// A wake came to wait for the job in progress (`lend_priority`).
    hurried: AtomicBool,
    priorities: MovePriorities,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic in the thread poisons nothing we cannot go on with: the
    // state is a queue and a few sets, each left consistent per statement.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

pub struct Reclaimer {
    shared: Arc<Shared>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Reclaimer {
    /// `page_out_first`: each job pages its context's memory out before
    /// the limit steps (`page_out_to`); `gate`: lowerings that yield
    /// (`Job::yields`) and no wake waits for wait at it (`wake_gate`).
    pub fn start(hierarchy: Hierarchy, page_out_first: bool, gate: WakeGate) -> Self {
        Self::start_at(hierarchy, page_out_first, gate, MovePriorities::default())
    }

    /// [`Reclaimer::start`] with each job at its priority of `priorities`.
    pub fn start_at(
        hierarchy: Hierarchy,
        page_out_first: bool,
        gate: WakeGate,
        priorities: MovePriorities,
    ) -> Self {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
            step: Mutex::new(()),
            tid: AtomicI32::new(0),
            page_out_first,
            gate,
            hurried: AtomicBool::new(false),
            priorities,
        });
        let s = shared.clone();
        let handle = std::thread::Builder::new()
            .name("memext-reclaim".into())
            .spawn(move || run(&s, &hierarchy))
            .expect("spawning the reclaimer thread");
        Self {
            shared,
            handle: Some(handle),
        }
    }

    /// Queues a job; one queued for the same context is replaced. An
    /// urgent one has the job in progress finish at the daemon's priority.
    /// A stop of the context's running job stands (it ends with that job):
    /// cleared here, it let a stopped lowering go on below the limit its
    /// stopper had written since (bench/faas, session 76: a waking
    /// function's raise undone, 3 MiB instead of 118, its knob then taken
    /// for someone else's and the function left alone for the rest of the
    /// run).
    pub fn submit(&self, job: Job) {
        let mut st = lock(&self.shared.state);
        st.queue.retain(|j| j.id != job.id);
        let urgent = job.urgent && st.running.is_some();
        st.queue.push_back(job);
        self.shared.wake.notify_one();
        drop(st);
        if urgent {
            self.lend_priority(self.shared.priorities.urgent);
        }
    }

    /// The job in progress goes on at `priority` (refused: at its own).
    fn lend_priority(&self, priority: Priority) {
        self.shared.hurried.store(true, Ordering::Relaxed);
        let tid = self.shared.tid.load(Ordering::Relaxed);
        if tid > 0 {
            self.shared.priorities.apply(tid, priority).ok();
        }
    }

    /// Whether a job for `id` is queued or running.
    pub fn in_flight(&self, id: &ContextId) -> bool {
        let st = lock(&self.shared.state);
        st.running.as_ref() == Some(id) || st.queue.iter().any(|j| &j.id == id)
    }

    /// A wake waits for `id`'s job: a queued one goes first, a running one
    /// goes on at the daemon's priority. Returns whether there was a job.
    pub fn hurry(&self, id: &ContextId) -> bool {
        let mut st = lock(&self.shared.state);
        let queued = st
            .queue
            .iter_mut()
            .find(|j| &j.id == id)
            .map(|j| j.urgent = true);
        if queued.is_none() && st.running.as_ref() != Some(id) {
            return false;
        }
        drop(st);
        // The job in progress (this one, or the one it waits behind).
        self.lend_priority(self.shared.priorities.urgent);
        true
    }

    /// Stops `id`'s job: a queued one is dropped, a running one ends after
    /// the step in progress (this waits for it, the thread at the daemon's
    /// priority meanwhile). Afterwards the knob is not written again by the
    /// reclaimer. Returns whether there was a job.
    pub fn stop_job(&self, id: &ContextId) -> bool {
        {
            let mut st = lock(&self.shared.state);
            let queued = st.queue.len();
            st.queue.retain(|j| &j.id != id);
            if st.queue.len() != queued {
                return true;
            }
            if st.running.as_ref() != Some(id) {
                return false;
            }
            st.stop.insert(id.clone());
        }
        // Its next step checks the stop; the current one ends sooner at
        // the waiter's priority (the daemon's loop waits: never idle).
        self.lend_priority(Priority::Nice(0));
        drop(lock(&self.shared.step));
        true
    }

    /// The jobs that ended since the last call.
    pub fn take_ended(&self) -> Vec<Ended> {
        std::mem::take(&mut lock(&self.shared.state).ended)
    }

    /// Stops the thread after the step in progress; queued jobs are dropped.
    pub fn stop(mut self) {
        {
            let mut st = lock(&self.shared.state);
            st.closing = true;
            st.queue.clear();
            if let Some(id) = st.running.clone() {
                st.stop.insert(id);
            }
        }
        self.shared.wake.notify_all();
        if let Some(h) = self.handle.take() {
            h.join().ok();
        }
    }
}

fn run(shared: &Shared, hierarchy: &Hierarchy) {
    shared
        .tid
        .store(memext_sys::sched::thread_id(), Ordering::Relaxed);
    let mut said = false;
    loop {
        let job = {
            let mut st = lock(&shared.state);
            loop {
                if st.closing {
                    return;
                }
                // Urgent jobs first.
                let next = st
                    .queue
                    .iter()
                    .position(|j| j.urgent)
                    .or((!st.queue.is_empty()).then_some(0));
                if let Some(i) = next.and_then(|i| st.queue.remove(i)) {
                    st.running = Some(i.id.clone());
                    shared.hurried.store(false, Ordering::Relaxed);
                    break i;
                }
                st = shared
                    .wake
                    .wait(st)
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
            }
        };
        let priority = if job.urgent {
            shared.priorities.urgent
        } else {
            shared.priorities.background
        };
        shared
            .priorities
            .run_next_at(priority, "reclaimer", &mut said);
        let ended = lower(shared, hierarchy, &job);
        let mut st = lock(&shared.state);
        st.running = None;
        st.stop.remove(&job.id);
        st.ended.push(ended);
    }
}

/// Writes `job`'s limit down step by step; between steps, a stop ends it.
fn lower(shared: &Shared, hierarchy: &Hierarchy, job: &Job) -> Ended {
    let started = Instant::now();
    let mut ended = Ended::begun(job);
    // What this job may still wait for wakes being read back.
    let mut may_wait = if job.urgent || !job.yields {
        Duration::ZERO
    } else {
        YIELD_AT_MOST
    };
    let mut yielded = Duration::ZERO;
    let mut yield_to_wakes = || {
        let go_on =
            || shared.hurried.load(Ordering::Relaxed) || lock(&shared.state).stop.contains(&job.id);
        let waited = shared.gate.wait_out(may_wait, go_on);
        yielded += waited;
        may_wait = may_wait.saturating_sub(waited);
    };
    match hierarchy.open(&job.path) {
        Ok(cg) => {
            if shared.page_out_first && job.page_out {
                yield_to_wakes();
                ended.paged_out = page_out_to(shared, &cg, &job.id, job.to);
            }
            step_down(job, &mut ended, &mut |value, relax| {
                if !relax {
                    yield_to_wakes();
                }
                let _step = lock(&shared.step);
                if lock(&shared.state).stop.contains(&job.id) {
                    return Err(Step::Stopped);
                }
                cg.write_limit(job.knob, Limit::Bytes(value))
                    .map_err(|e| Step::Refused(format!("{e:#}")))
            });
        }
        Err(e) => ended.error = Some(format!("{e:#}")),
    }
    ended.yielded = yielded;
    ended.took = started.elapsed();
    ended
}

/// Pages the context's memory out with `process_madvise` until its usage
/// is down to `to` (or nothing resident is left to advise, or a stop comes),
/// so that the limit steps after reclaim little. Measured here (a sleeping
/// process's 256 MiB heap to a swap file, `bench/peers/pageout_cost.py`;
/// docs/peers/s23-2026-11-26): 0.67-0.76 CPU-seconds a GiB and 0-2 TLB
/// shootdowns a MiB, against 2.54-3.24 CPU-seconds and 96-147 shootdowns a
/// MiB (interrupts on every other CPU that ran it) for the same pages
/// reclaimed by v1 limit writes in `STEP`s. Returns the bytes advised.
fn page_out_to(shared: &Shared, cg: &AnyCgroup, id: &ContextId, to: u64) -> u64 {
    let usage = || cg.memory().map(|m| m.usage_bytes).unwrap_or(0);
    if usage() <= to {
        return 0;
    }
    let Ok(pids) = cg.procs_recursive() else {
        return 0;
    };
    let mut work = Vec::new();
    for pid in pids {
        if let Ok(resident) = ranges_of(pid, PageState::Resident) {
            work.push((pid, resident));
        }
    }
    let stopped = || lock(&shared.state).stop.contains(id) || usage() <= to;
    match advise_paced(&work, Advice::PageOut, 0, stopped) {
        Ok(p) => p.pages * memext_sys::page_size(),
        Err(e) => {
            tracing::debug!("page-out before lowering {id}: {e}");
            0
        }
    }
}

#[path = "reclaim_steps.rs"]
mod stepping;
pub use stepping::{step_down, steps, Step};

#[cfg(test)]
#[path = "reclaim_tests.rs"]
mod tests;
