//! The engine's pure core: what memext believes about each memory context and
//! what it decides to do. No I/O, no clocks: the daemon passes in samples and
//! the time, and carries out the plan. Everything here is deterministic and is
//! tested on simulated traces.
//!
//! - [`activity`]: is a context doing something, from two counter samples.
//! - [`model`]: the per-context state machine active → idle → waking → active.
//! - [`history`]: activation history, periodic-wake and co-wake prediction.
//! - [`workingset`]: which 2 MiB chunks of a context were resident, and how hot.
//! - [`predict`]: which idle contexts to bring back now, and why.
//! - [`planner`]: DRAM targets and actions for all contexts under a capacity.
//! - [`context`]: what the engine holds per context, and the samples it takes.
//! - [`engine`]: the decisions of a tick: when to record a working set, what to
//!   push out or bring back, in what order and how fast, what to hold, when to
//!   throttle, whom to admit when waking contexts do not fit together; the
//!   daemon executes the commands and reports back.
//! - [`limit_room`]: on a host without kernel protection for critical
//!   contexts, the extend limits never sum past the room they leave.
//! - [`command`]: the commands a decision comes out as, and their outcomes.
//! - [`refault`]: what a context refaults after memext took memory from it
//!   is not activity.
//! - [`peak`]: the most a context had in a stretch of activity, for
//!   admission at the peak.
//! - [`rest`], [`touch`]: a resting context's call told from its rest, by
//!   its CPU and by the memory it touched.
#![forbid(unsafe_code)]

pub mod activity;
pub mod command;
pub mod context;
pub mod cpu_cap;
pub mod engine;
pub mod growth;
pub mod history;
pub mod limit_room;
pub mod model;
pub mod peak;
pub mod planner;
pub mod predict;
pub mod refault;
pub mod rest;
pub mod touch;
pub mod workingset;

/// Time since the daemon started (monotonic). The engine never reads a clock.
pub type Instant = std::time::Duration;

/// How memext treats a context (`ignore`d contexts never reach the engine).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    Critical,
    Extend,
}

impl std::fmt::Display for Class {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Class::Critical => "critical",
            Class::Extend => "extend",
        })
    }
}

/// A memory context's identity in the engine: its cgroup path, relative to the
/// hierarchy's root (`/docker/<id>`), which is unique on the host while the
/// cgroup exists. A key, not a display string: status, metrics and events carry
/// it as a field of its own. Shared, not copied: every tick hands each
/// context's id to plans, commands and reports, thousands of them.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct ContextId(std::sync::Arc<str>);

impl ContextId {
    pub fn new(cgroup: impl Into<String>) -> Self {
        Self(cgroup.into().into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&str> for ContextId {
    fn from(s: &str) -> Self {
        Self(s.into())
    }
}

impl std::fmt::Display for ContextId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
