//! The CPU priorities the daemon's moves run at: the mover's page-outs and
//! read-backs and the reclaimer's limit steps are kernel work (compression,
//! decompression, reclaim) done for the contexts on the daemon's threads.

use memext_sys::sched::Priority;

use crate::config::{DaemonConfig, MovePriority};

/// The nice value of moves no wake waits for. Its page-outs (reclaim done
/// in this thread) and read-backs (faults and swap reads submitted from it)
/// are work for extend contexts, done on the CPU critical ones leave, as
/// the extend contexts' own faults are (their CPU weight): bench/peers
/// measured the daemon at 8-12% of the machine in the cells where the
/// critical workload lost CPU.
pub const MOVER_NICE: i32 = 19;

/// What each kind of move runs at (`daemon.move_priority`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MovePriorities {
    /// Moves no wake waits for: push-outs, predicted read-backs, lowerings.
    pub background: Priority,
    /// The read-back of a woken context.
    pub wake_read_back: Priority,
    /// A lowering a wake waits for the room of.
    pub urgent: Priority,
}

impl Default for MovePriorities {
    /// `move_priority = "nice"` with its defaults.
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
            },
            MovePriority::Idle => Self {
                background: Priority::Idle,
                wake_read_back: Priority::Idle,
                urgent: Priority::Idle,
            },
        }
    }
}

/// Sets the calling thread's priority for its next job; a refusal is said
/// once per thread (`said`), and the job runs at the priority it has.
pub fn run_next_at(priority: Priority, who: &str, said: &mut bool) {
    if let Err(e) = memext_sys::sched::set_thread_priority(priority) {
        if !std::mem::replace(said, true) {
            tracing::warn!("the {who} runs at the daemon's CPU priority: {e}");
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
