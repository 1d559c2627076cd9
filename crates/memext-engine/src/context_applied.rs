//! What memext last wrote to a context's knobs: a write repeated within
//! `REASSERT` is left out.

use crate::Instant;

/// What memext last wrote to a context's knobs, and when. A command that
/// would write the same value again is not sent until [`REASSERT`] has
/// passed; then it is, and the ledger's re-read before the write notices a
/// value someone else wrote meanwhile. An idle context costs no knob read
/// per tick this way.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Applied {
    pub limit: Option<(u64, Instant)>,
    pub protect: Option<(u64, Instant)>,
    pub weight: Option<(u16, Instant)>,
    pub cpu_max: Option<(Option<u64>, Instant)>,
    pub cpu_idle: Option<Instant>,
}

/// How long a knob value memext wrote goes unchecked.
pub const REASSERT: std::time::Duration = std::time::Duration::from_secs(30);

impl Applied {
    /// Whether `cmd` would write what was written less than REASSERT ago.
    pub fn repeats(&self, cmd: &crate::command::Command, now: Instant) -> bool {
        use crate::command::Command;
        let recent = |at: Instant| now.saturating_sub(at) < REASSERT;
        match cmd {
            Command::Limit { bytes, .. } => {
                self.limit.is_some_and(|(b, at)| b == *bytes && recent(at))
            }
            Command::Protect { bytes, .. } => self
                .protect
                .is_some_and(|(b, at)| b == *bytes && recent(at)),
            Command::CpuWeight { weight, .. } => self
                .weight
                .is_some_and(|(w, at)| w == *weight && recent(at)),
            Command::CpuMax { quota_us, .. } => self
                .cpu_max
                .is_some_and(|(q, at)| q == *quota_us && recent(at)),
            Command::CpuIdle { .. } => self.cpu_idle.is_some_and(recent),
            _ => false,
        }
    }

    /// Records a knob command carried out (or tried) at `now`.
    pub fn record(&mut self, cmd: &crate::command::Command, now: Instant) {
        use crate::command::Command;
        match cmd {
            Command::Limit { bytes, .. } => self.limit = Some((*bytes, now)),
            Command::Protect { bytes, .. } => self.protect = Some((*bytes, now)),
            Command::CpuWeight { weight, .. } => self.weight = Some((*weight, now)),
            Command::CpuMax { quota_us, .. } => self.cpu_max = Some((*quota_us, now)),
            Command::CpuIdle { .. } => self.cpu_idle = Some(now),
            _ => {}
        }
    }
}
