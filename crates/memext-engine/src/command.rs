//! What the engine's decisions come out as: the commands the actuator
//! carries out (which knob, which pages, how fast), and what it reports back.

use crate::model::Transition;
use crate::planner::Plan;
use crate::predict::PrefetchReason;
use crate::workingset::ChunkKey;
use crate::ContextId;

/// Read swapped pages back in, then optionally map the hottest chunks.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BringBack {
    pub id: ContextId,
    pub reason: PrefetchReason,
    pub pids: Vec<u32>,
    /// Working-set chunks, hottest first; the rest follows by address.
    pub order: Vec<ChunkKey>,
    pub bandwidth: u64,
    /// Map the chunks of `order` as huge pages afterwards (predicted wake).
    pub map_back: bool,
    /// With `map_back`, map every 2 MiB block held whole as a huge page too
    /// (`ClassParams::map_kept`).
    pub map_kept: bool,
    /// Read back coldest first (the woken process faults its hottest pages
    /// in by itself from a synchronous tier).
    pub from_the_end: bool,
}

/// Page out a context's resident anonymous memory except `keep`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PushOut {
    pub id: ContextId,
    /// The DRAM the planner leaves it.
    pub keep_bytes: u64,
    pub pids: Vec<u32>,
    /// The hottest chunks that fill `keep_bytes`.
    pub keep: Vec<ChunkKey>,
    pub bandwidth: u64,
}

/// One thing for the actuator to do, in the order given.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum Command {
    /// Guarantee a critical context `bytes` (v2 memory.min; v1: the others'
    /// limits keep the room). `keep_anon` (its class's): its memory gets no
    /// swap (v1 `memory.swappiness` 0, v2 `memory.swap.max` 0), so the
    /// reclaim of a cap above it (the parent's limit, when the others'
    /// memory overshoots it) takes none of its anonymous or shared memory,
    /// only its page cache.
    Protect {
        id: ContextId,
        bytes: u64,
        keep_anon: bool,
    },
    /// Cap an extend context (v1 limit_in_bytes with OOM kills off, v2 memory.high).
    Limit {
        id: ContextId,
        bytes: u64,
    },
    /// Lower an extend context's limit to `bytes`, below what it uses, in
    /// the background: the kernel reclaims the difference in the thread
    /// that writes the limit, which must not be the daemon's loop (such
    /// writes held it 4.4-5.3 s per bench/peers invocation, at nice 0).
    /// Its room is not free until [`crate::engine::Engine::reclaimed`] says so.
    /// `urgent`: a wake waits for that room (written at the daemon's
    /// priority, not the reclaimer's low one). `resting`: the context is
    /// idle, or active and quiet (`ContextState::rests`): its memory may
    /// be paged out in any order before the limit steps (the daemon's
    /// `reclaim = "page-out"`); an active context's is left to the
    /// kernel's reclaim at the limit, which takes its coldest pages first.
    /// `yields`: the context is pushed out only when its room is needed (a
    /// host meant to be full): unless a wake waits for it, its lowering
    /// waits while a woken context is read back (the daemon's wake gate).
    Reclaim {
        id: ContextId,
        bytes: u64,
        urgent: bool,
        resting: bool,
        yields: bool,
    },
    BringBack(BringBack),
    PushOut(PushOut),
    /// Run the context at this CPU weight (v2 scale: 1-10000, 100 the
    /// kernel's default; v1 `cpu.shares` scaled by 1024/100).
    CpuWeight {
        id: ContextId,
        weight: u16,
    },
    /// Cap the context's CPU at `quota_us` per 100 ms period (v1
    /// `cpu.cfs_quota_us`, v2 `cpu.max`), or lift the cap (None).
    CpuMax {
        id: ContextId,
        quota_us: Option<u64>,
    },
    /// Run the context as an idle CPU group (v1 and v2 `cpu.idle` 1; the
    /// ledger puts back what was there when the daemon stops).
    CpuIdle {
        id: ContextId,
    },
    /// Freeze a queued waking context (true) until it is admitted, or thaw
    /// it (false).
    Freeze {
        id: ContextId,
        frozen: bool,
    },
}

impl Command {
    pub fn id(&self) -> &ContextId {
        match self {
            Command::Protect { id, .. }
            | Command::Limit { id, .. }
            | Command::Reclaim { id, .. }
            | Command::CpuWeight { id, .. }
            | Command::CpuMax { id, .. }
            | Command::CpuIdle { id, .. }
            | Command::Freeze { id, .. } => id,
            Command::BringBack(b) => &b.id,
            Command::PushOut(p) => &p.id,
        }
    }
}

/// What the actuator reports for a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Written, or handed to the mover.
    Done,
    /// The knob holds a value memext did not write: someone else manages the
    /// context now; memext leaves it alone from here on.
    Foreign,
    /// The kernel refused or the cgroup vanished; nothing to believe.
    Failed,
}

/// What one sample changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Observed {
    pub transition: Option<Transition>,
    /// Record the context's working set now (its resident ranges per process).
    pub wants_working_set: bool,
}

/// The decisions of one tick.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The planner's targets and actions (what a dry run prints).
    pub plan: Plan,
    /// What to do, in order, already filtered against what is in flight.
    pub commands: Vec<Command>,
    /// Critical contexts under pressure (page-out and prefetch throttled).
    pub pressed: Vec<ContextId>,
    /// A critical context runs now (`cpu_cap::critical_runs`): the moves
    /// no wake waits for are to yield it the CPU (the daemon's
    /// `move_group`).
    pub critical_runs: bool,
}
