//! The CPU priorities the daemon's moves run at: the mover's page-outs and
//! read-backs and the reclaimer's limit steps are kernel work (compression,
//! decompression, reclaim) done for the contexts on the daemon's threads.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use memext_cgroup::{GroupWeight, ThreadGroup};
use memext_sys::sched::Priority;

use crate::config::{DaemonConfig, MovePriority};

/// The nice value of moves no wake waits for. Its page-outs (reclaim done
/// in this thread) and read-backs (faults and swap reads submitted from it)
/// are work for extend contexts, done on the CPU critical ones leave, as
/// the extend contexts' own faults are (their CPU weight): bench/peers
/// measured the daemon at 8-12% of the machine in the cells where the
/// critical workload lost CPU. A nice value weighs only within the
/// daemon's own scheduling group, which weighs as much as a container's
/// cgroup: against the containers, it is what it says only in the
/// group of `background_group` (`daemon.move_group`).
pub const MOVER_NICE: i32 = 19;

/// What each kind of move runs at (`daemon.move_priority`).
#[derive(Debug, Clone)]
pub struct MovePriorities {
    /// Moves no wake waits for: push-outs, predicted read-backs, lowerings.
    pub background: Priority,
    /// The read-back of a woken context.
    pub wake_read_back: Priority,
    /// A lowering a wake waits for the room of.
    pub urgent: Priority,
    /// Where a thread runs while at `background` and the group is on
    /// (`background_group`): beside the contexts' cgroups, at the weight
    /// its nice value means.
    pub group: Option<Arc<MoveGroup>>,
}

impl Default for MovePriorities {
    /// `move_priority = "nice"` with its defaults, no group.
    fn default() -> Self {
        Self::from_config(&DaemonConfig::default())
    }
}

impl MovePriorities {
    pub fn from_config(d: &DaemonConfig) -> Self {
        match d.move_priority {
            MovePriority::Nice => Self {
                background: Priority::Nice(MOVER_NICE),
                wake_read_back: Priority::Nice(d.wake_read_back_nice.0),
                urgent: Priority::Nice(0),
                group: None,
            },
            MovePriority::Idle => Self {
                background: Priority::Idle,
                wake_read_back: Priority::Idle,
                urgent: Priority::Idle,
                group: None,
            },
        }
    }

    /// These priorities, a thread at `background` in `group`.
    pub fn in_group(self, group: Option<Arc<MoveGroup>>) -> Self {
        Self { group, ..self }
    }

    /// Sets thread `tid` (of this process) to `priority`, in the group
    /// while that is `background` and the group is on, else at home.
    /// The nice value (or policy) is set even where the group refuses the
    /// thread; the first refusal is returned.
    pub fn apply(&self, tid: i32, priority: Priority) -> std::io::Result<()> {
        let set = memext_sys::sched::set_priority_of(tid, priority);
        let placed = self
            .group
            .as_ref()
            .map_or(Ok(()), |g| g.place(tid, priority == self.background));
        set.and(placed)
    }

    /// Sets the calling thread's priority for its next job; a refusal is
    /// said once per thread (`said`), and the job runs at the priority it
    /// has.
    pub fn run_next_at(&self, priority: Priority, who: &str, said: &mut bool) {
        if let Err(e) = self.apply(memext_sys::sched::thread_id(), priority) {
            if !std::mem::replace(said, true) {
                tracing::warn!("the {who} runs at the daemon's CPU priority: {e}");
            }
        }
    }
}

/// The cpu cgroup of the background moves, and whether they run in it
/// now: only while a critical context runs (the engine's
/// `Decision::critical_runs`), the CPU the group keeps from the moves being
/// the critical workload's. Where none runs, the moves are the host's own
/// work (a push-out makes the room the next cold call needs): in
/// bench/faas, with no critical context, the group all the time lost warm
/// calls and raised the p99 in all three rounds (session 75).
#[derive(Debug)]
pub struct MoveGroup {
    threads: ThreadGroup,
    on: AtomicBool,
}

impl MoveGroup {
    /// `threads`, off until switched on.
    pub fn new(threads: ThreadGroup) -> Self {
        Self {
            threads,
            on: AtomicBool::new(false),
        }
    }

    pub fn dir(&self) -> &Path {
        self.threads.dir()
    }

    pub fn is_on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    /// Turns the group on or off; whether that changed it. Off, every
    /// thread in it goes home at once (a move under way goes on at its nice
    /// value); on, a thread joins at its next background move.
    pub fn switch(&self, on: bool) -> std::io::Result<bool> {
        if self.on.swap(on, Ordering::Relaxed) == on {
            return Ok(false);
        }
        if !on {
            self.threads.send_home()?;
        }
        Ok(true)
    }

    /// Puts thread `tid` in the group if it runs a `background` move and
    /// the group is on, else at home.
    fn place(&self, tid: i32, background: bool) -> std::io::Result<()> {
        if background && self.is_on() {
            self.threads.join(tid)
        } else {
            self.threads.leave(tid)
        }
    }
}

/// Name of the cpu cgroup the background moves run in.
pub const GROUP_NAME: &str = "memext-moves";

/// The cpu cgroup the daemon's background moves run in: on a v1 cpu
/// hierarchy, `memext-moves` at its top, beside the contexts' cgroups, at
/// the weight of `background`'s nice value (SCHED_IDLE: `cpu.idle`). A
/// nice value alone weighs only within the daemon's own group (its cpu
/// cgroup, or its session's autogroup), which the kernel weighs against
/// each container's cgroup as a nice-0 task's: bench/faas' daemon ran
/// its "nice 19" push-outs at the weight of a whole function. None
/// (said why) where there is no such hierarchy (cgroup v2: see
/// `memext_cgroup::threads`) or it cannot be made.
pub fn background_group(cpu_root: Option<&Path>, background: Priority) -> Option<Arc<MoveGroup>> {
    let Some(root) = cpu_root else {
        tracing::info!(
            "moves run at their nice values within the daemon's cgroup: no v1 cpu hierarchy to give them a group of their own"
        );
        return None;
    };
    let weight = match background {
        Priority::Nice(n) => GroupWeight::of_nice(n),
        Priority::Idle => GroupWeight::Idle,
    };
    match ThreadGroup::create(root, GROUP_NAME, weight) {
        Ok(g) => {
            tracing::info!(
                group = %g.dir().display(),
                weight = ?weight,
                "background moves run in a cpu cgroup of their own while a critical context runs"
            );
            Some(Arc::new(MoveGroup::new(g)))
        }
        Err(e) => {
            tracing::warn!("moves run at their nice values within the daemon's cgroup: {e}");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Nice;

    #[test]
    fn nice_moves_keep_their_nice_values_and_idle_ones_are_all_idle() {
        let mut d = DaemonConfig {
            wake_read_back_nice: Nice(7),
            ..DaemonConfig::default()
        };
        let nice = MovePriorities::from_config(&d);
        assert_eq!(nice.background, Priority::Nice(19));
        assert_eq!(nice.wake_read_back, Priority::Nice(7));
        assert_eq!(nice.urgent, Priority::Nice(0));
        d.move_priority = MovePriority::Idle;
        let idle = MovePriorities::from_config(&d);
        assert_eq!(
            [idle.background, idle.wake_read_back, idle.urgent],
            [Priority::Idle; 3]
        );
    }
}
