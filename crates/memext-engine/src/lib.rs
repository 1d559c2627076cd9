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
#![forbid(unsafe_code)]

pub mod activity;
pub mod history;
pub mod model;
pub mod planner;
pub mod predict;
pub mod workingset;

/// Time since the daemon started (monotonic). The engine never reads a clock.
pub type Instant = std::time::Duration;

/// How memext treats a context (`ignore`d contexts never reach the engine).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Class {
    Critical,
    Extend,
}
