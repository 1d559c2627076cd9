//! The act step: carries out the engine's commands in the order given, every
//! knob through the ledger (re-read before each write, restored at the end),
//! page moves handed to the mover thread, and reports each command's outcome.
//! In a dry run it prints the plan instead and changes nothing. Lowerings
//! below the usage, handed to the reclaimer: `act_lowering`.
//!
//! Must not: decide. Which context, how far, in which order and how fast are
//! the engine's; this module maps a command to the cgroup version's knobs.

use std::collections::{BTreeMap, HashSet};

use memext_cgroup::{AnyCgroup, CgroupError, Hierarchy, Limit, LimitKnob, MemoryCgroup, Version};
use memext_engine::cpu_cap::within_own;
use memext_engine::engine::{Command, Outcome};
use memext_engine::planner::Action;
use memext_engine::ContextId;

use super::events;
use super::ledger::{Ledger, LedgerError, Restored, Written};
use super::mover::{Job, Mover};
use super::reclaim::Reclaimer;
use crate::units::human_bytes;

/// A knob write that takes this long is logged (`slow-write`).
const SLOW_WRITE: std::time::Duration = std::time::Duration::from_millis(10);

/// On cgroup v1 the hard limit stands this far above the limit the engine
/// planned: a lowering reclaims down to the planned limit and then leaves
/// this room (`reclaim::Job::leave_at`), and every other write adds it.
/// At a v1 limit with OOM kills off (as memext runs a context), only a
/// page fault of the context's own waits when reclaim fails there; a
/// charge the kernel makes on its behalf fails, and where that is the
/// write of glibc's rseq area, made each time a task returns to user
/// space after it was switched out, the task dies of SIGSEGV
/// (`docs/faas/s48-2026-12-01/rseq/`). Of the four functions
/// bench/faas lost so, three (sessions 48, 54, 56) died 0.14-0.2 s after a
/// lowering reached their floor and one (session 47) 0.15 s after a
/// lowering to it was refused, at the first wake after: held at the
/// limit, its first charge had to reclaim. With this room, after a
/// lowering that reached its target, it does not. The engine plans
/// without it, and is told of it (`HostFacts::charge_room`): a usage within
/// it is no reason to lower the limit again (a function at rest touches a
/// few pages of it).
pub const V1_CHARGE_ROOM: u64 = 1 << 20;

/// The value written to `knob` for a limit of `bytes` planned.
pub fn written_limit(knob: LimitKnob, bytes: u64) -> u64 {
    match knob {
        LimitKnob::V1Limit => bytes.saturating_add(V1_CHARGE_ROOM),
        _ => bytes,
    }
}

/// The planned limit a value `held` in `knob` stands for (`written_limit`'s
/// inverse).
pub fn planned_limit(knob: LimitKnob, held: u64) -> u64 {
    match knob {
        LimitKnob::V1Limit => held.saturating_sub(V1_CHARGE_ROOM),
        _ => held,
    }
}

pub struct Actuator {
    ledger: Ledger,
    /// None in a dry run.
    mover: Option<Mover>,
    /// Lowers limits below the usage off the loop; None in a dry run or
    /// with `daemon.reclaim = "loop"` (then written here, at once).
    reclaimer: Option<Reclaimer>,
    /// Lowerings that ended (settled in the ledger), for the engine: the
    /// context and the limit it holds (`None`: not memext's to know).
    reclaimed: Vec<(ContextId, Option<u64>)>,
    /// Contexts whose foreign knob was reported (once each).
    said_foreign: HashSet<ContextId>,
    /// Dry run: what was printed last per context (print only changes).
    said: BTreeMap<ContextId, String>,
    /// Knobs whose write failed and was reported: said again only after a
    /// write of that knob succeeded (a context without a cpu controller fails
    /// its CPU weight every tick).
    said_failed: HashSet<(ContextId, LimitKnob)>,
    /// `daemon.yield_to_wakes`: every lowering yields to read-backs (true),
    /// none (false), or those the engine says (unset).
    yield_to_wakes: Option<bool>,
}

impl Actuator {
    pub fn new(ledger: Ledger, mover: Option<Mover>) -> Self {
        Self {
            ledger,
            mover,
            reclaimer: None,
            reclaimed: Vec::new(),
            said_foreign: HashSet::new(),
            said: BTreeMap::new(),
            said_failed: HashSet::new(),
            yield_to_wakes: None,
        }
    }

    /// From now on commands are carried out (until then, a dry run).
    pub fn start_mover(&mut self, mover: Mover) {
        self.mover = Some(mover);
    }

    /// From now on limits below the usage are lowered in the background.
    /// `yield_to_wakes`: which lowerings wait while a woken context is read
    /// back (`daemon.yield_to_wakes`).
    pub fn start_reclaimer(&mut self, reclaimer: Reclaimer, yield_to_wakes: Option<bool>) {
        self.reclaimer = Some(reclaimer);
        self.yield_to_wakes = yield_to_wakes;
    }

    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    pub fn mover(&self) -> Option<&Mover> {
        self.mover.as_ref()
    }

    pub fn is_dry_run(&self) -> bool {
        self.mover.is_none()
    }

    /// The page faults the mover caused in `id`'s processes since last asked.
    pub fn take_faults_caused(&self, id: &ContextId) -> (u64, u64) {
        self.mover
            .as_ref()
            .map_or((0, 0), |m| m.take_faults_caused(id))
    }

    /// Whether the mover or the reclaimer has a job queued or running for `id`.
    pub fn is_busy(&self, id: &ContextId) -> bool {
        self.mover.as_ref().is_some_and(|m| m.is_busy(id))
            || self.reclaimer.as_ref().is_some_and(|r| r.in_flight(id))
    }

    /// Carries out one command on the context's cgroup.
    pub fn execute(&mut self, cmd: &Command, cg: &AnyCgroup) -> Outcome {
        let Some(mover) = self.mover.as_ref() else {
            return Outcome::Failed; // a dry run changes nothing
        };
        match cmd {
            Command::Protect {
                id,
                bytes,
                keep_anon,
            } => {
                // v1: the others' limits keep its room; v2: memory.min.
                let room = match cg.version() {
                    Version::V1 => Outcome::Done,
                    Version::V2 => self.guarded(id, cg, LimitKnob::Min, Limit::Bytes(*bytes)),
                };
                match (*keep_anon, room) {
                    (true, Outcome::Done) => self.keep_anon(id, cg),
                    _ => room,
                }
            }
            Command::Limit { id, bytes } => {
                self.stop_reclaim(id, cg);
                match self.limit_knob(id, cg) {
                    Some(knob) => {
                        self.guarded(id, cg, knob, Limit::Bytes(written_limit(knob, *bytes)))
                    }
                    None => Outcome::Foreign,
                }
            }
            Command::Reclaim {
                id,
                bytes,
                urgent,
                resting,
                yields,
            } => self.reclaim(id, cg, *bytes, *urgent, *resting, *yields),
            Command::CpuWeight { id, weight } => {
                let (knob, value) = match cg.version() {
                    Version::V1 => (LimitKnob::V1CpuShares, v1_cpu_shares(*weight)),
                    Version::V2 => (LimitKnob::CpuWeight, u64::from((*weight).clamp(1, 10000))),
                };
                self.guarded(id, cg, knob, Limit::Bytes(value))
            }
            Command::CpuMax { id, quota_us } => {
                let knob = match cg.version() {
                    Version::V1 => LimitKnob::V1CfsQuota,
                    Version::V2 => LimitKnob::CpuMax,
                };
                // The owner's own quota: what memext found before its first
                // write (the ledger's record), or what the knob holds now.
                let own = match self.ledger.original(id.as_str(), knob) {
                    Some(original) => original,
                    None => match cg.read_limit(knob) {
                        Ok(current) => current,
                        Err(_) => return Outcome::Failed,
                    },
                };
                let quota = within_own(*quota_us, own.bytes());
                self.guarded(id, cg, knob, quota.map_or(Limit::Max, Limit::Bytes))
            }
            Command::CpuIdle { id } => {
                let knob = match cg.version() {
                    Version::V1 => LimitKnob::V1CpuIdle,
                    Version::V2 => LimitKnob::CpuIdle,
                };
                self.guarded(id, cg, knob, Limit::Bytes(1))
            }
            Command::Freeze { id, frozen } => {
                let knob = match cg.version() {
                    Version::V1 => LimitKnob::V1Freezer,
                    Version::V2 => LimitKnob::Freeze,
                };
                let outcome = self.guarded(id, cg, knob, Limit::Bytes(u64::from(*frozen)));
                if outcome == Outcome::Done {
                    events::frozen(id, *frozen);
                }
                outcome
            }
            Command::BringBack(b) => {
                events::bringing_back(b);
                mover.submit(Job::BringBack {
                    key: b.id.clone(),
                    pids: b.pids.clone(),
                    order: b.order.clone(),
                    bandwidth: b.bandwidth,
                    map_back: b.map_back,
                    map_kept: b.map_kept,
                    from_the_end: b.from_the_end,
                    urgent: b.reason == memext_engine::predict::PrefetchReason::Woke,
                });
                Outcome::Done
            }
            Command::PushOut(p) => {
                events::pushing_out(p);
                mover.submit(Job::PushOut {
                    key: p.id.clone(),
                    pids: p.pids.clone(),
                    keep: p.keep.iter().copied().collect(),
                    bandwidth: p.bandwidth,
                });
                Outcome::Done
            }
        }
    }

    /// A critical context's anonymous and shared memory kept out of swap
    /// (`keep_anon`): v1 `memory.swappiness` 0, v2 `memory.swap.max` 0, so
    /// that the reclaim of a cap above it takes only its page cache (see
    /// [`keep_anon_value`] for where it is not written).
    fn keep_anon(&mut self, id: &ContextId, cg: &AnyCgroup) -> Outcome {
        let (knob, limits) = match cg.version() {
            Version::V1 => (LimitKnob::V1Swappiness, &[LimitKnob::V1Limit][..]),
            Version::V2 => (LimitKnob::SwapMax, &[LimitKnob::Max, LimitKnob::High][..]),
        };
        let mut own_limit = false;
        for &k in limits {
            match cg.read_limit(k) {
                Ok(Limit::Max) => {}
                Ok(Limit::Bytes(_)) => own_limit = true,
                Err(_) => return Outcome::Failed,
            }
        }
        let original = self.ledger.original(id.as_str(), knob);
        // What the knob holds decides only on v2, before memext wrote it
        // (whose swap limit it is); else it is not read (the ledger's
        // write checks it anyway).
        let current = if cg.version() == Version::V2 && original.is_none() {
            match cg.read_limit(knob) {
                Ok(current) => current,
                Err(_) => return Outcome::Failed,
            }
        } else {
            Limit::Max
        };
        match keep_anon_value(cg.version(), own_limit, current, original) {
            Some(value) => self.guarded(id, cg, knob, value),
            None => Outcome::Done,
        }
    }

    /// The limit knob of `cg`'s version; on v1 OOM kills are turned off
    /// first. `None`: someone else's. (A v1 limit is hard: a wake that
    /// outruns its raise would OOM-kill the context. With OOM kills off,
    /// the task pauses instead until memext raises the limit. v2's
    /// `memory.high` throttles and never kills.)
    fn limit_knob(&mut self, id: &ContextId, cg: &AnyCgroup) -> Option<LimitKnob> {
        if cg.version() == Version::V1
            && self.guarded(id, cg, LimitKnob::V1OomKillDisable, Limit::Bytes(1))
                == Outcome::Foreign
        {
            return None;
        }
        Some(memory_limit_knob(cg.version()))
    }

    fn report_foreign(&mut self, id: &ContextId, knob: LimitKnob, found: Limit, ours: Limit) {
        self.say_foreign(id, knob, &found.to_string(), &ours.to_string());
    }

    /// Someone else's knob, said once per context.
    pub(super) fn say_foreign(&mut self, id: &ContextId, knob: LimitKnob, found: &str, ours: &str) {
        if self.said_foreign.insert(id.clone()) {
            events::foreign_knob(id, &knob.to_string(), found, ours);
        }
    }

    /// A knob write through the ledger; someone else's knob is reported once,
    /// a failing knob once until it is written again.
    fn guarded(
        &mut self,
        id: &ContextId,
        cg: &AnyCgroup,
        knob: LimitKnob,
        value: Limit,
    ) -> Outcome {
        let started = std::time::Instant::now();
        let written = self.ledger.write(cg, knob, value);
        let took = started.elapsed();
        if took >= SLOW_WRITE {
            events::slow_write(id, &knob.to_string(), &value.to_string(), took);
        }
        match written {
            Ok(Written::Foreign { found, ours }) => {
                self.report_foreign(id, knob, found, ours);
                Outcome::Foreign
            }
            Ok(_) => {
                self.said_failed.remove(&(id.clone(), knob));
                Outcome::Done
            }
            Err(LedgerError::Cgroup(CgroupError::Vanished { .. })) => Outcome::Failed,
            Err(e) => {
                if self.said_failed.insert((id.clone(), knob)) {
                    events::knob_failed(id, &knob.to_string(), &value.to_string(), &e);
                }
                Outcome::Failed
            }
        }
    }

    /// Dry run: prints each context's planned actions when they change.
    pub fn print_plan(&mut self, actions: &[Action], states: &[(ContextId, String)]) {
        for (id, state) in states {
            let mine: Vec<String> = actions
                .iter()
                .filter(|a| a.key() == id)
                .map(|a| match a {
                    Action::PushOut { keep, .. } => format!("push out to {}", human_bytes(*keep)),
                    Action::BringBack { reason, .. } => format!("bring back ({reason})"),
                    Action::Limit { bytes, .. } => format!("limit {}", human_bytes(*bytes)),
                    Action::Protect { bytes, .. } => format!("protect {}", human_bytes(*bytes)),
                    Action::Wait { .. } => "wait for room (frozen)".to_owned(),
                })
                .collect();
            let line = mine.join(", ");
            if self.said.get(id) != Some(&line) {
                println!(
                    "dry-run: {id} [{state}]: {}",
                    if line.is_empty() { "nothing" } else { &line }
                );
                self.said.insert(id.clone(), line);
            }
        }
    }

    /// A context left the engine (its cgroup is gone, or no longer selected):
    /// its knobs are put back where the cgroup still exists, and forgotten.
    pub fn release(&mut self, h: &Hierarchy, id: &ContextId) {
        if self.is_dry_run() {
            return;
        }
        if let Some(r) = self.reclaimer.as_ref() {
            r.stop_job(id);
        }
        match self.ledger.release(h, id.as_str()) {
            Ok(released) => {
                for (r, outcome) in released {
                    if let Restored::Failed(e) = outcome {
                        events::knob_failed(id, &r.knob.to_string(), &r.original.to_string(), &e);
                    }
                }
            }
            Err(e) => tracing::warn!("{id}: releasing its knobs: {e:#}"),
        }
        self.said_foreign.remove(id);
        self.said.remove(id);
        self.said_failed.retain(|(c, _)| c != id);
    }

    /// Stops the mover and, unless this was a dry run, restores every knob
    /// memext changed.
    pub fn shutdown(&mut self, h: &Hierarchy) {
        let Some(m) = self.mover.take() else {
            return;
        };
        m.stop();
        // Any value a lowering left is memext's (the ledger's range): the
        // originals go back below.
        if let Some(r) = self.reclaimer.take() {
            r.stop();
        }
        match self.ledger.restore_all(h) {
            Ok(problems) => problems
                .iter()
                .for_each(|p| tracing::warn!("not restored: {p}")),
            Err(e) => tracing::error!("restoring knobs: {e:#}"),
        }
    }
}

/// The knob memext limits a context's memory with: v1's hard limit, v2's
/// `memory.high`.
pub(super) fn memory_limit_knob(v: Version) -> LimitKnob {
    match v {
        Version::V1 => LimitKnob::V1Limit,
        Version::V2 => LimitKnob::High,
    }
}

/// v1 `cpu.shares` for a v2-scale CPU weight (100 is 1024, the defaults of
/// both), within the kernel's 2-262144.
pub fn v1_cpu_shares(weight: u16) -> u64 {
    (u64::from(weight) * 1024 / 100).clamp(2, 262_144)
}

/// What `keep_anon` writes to a critical context's swap knob (v1
/// `memory.swappiness`, v2 `memory.swap.max`) holding `current` (read only
/// where it decides: v2, `original` unset), `None` for nothing. 0, except:
/// - under a limit of its own (the operator's: v1 `memory.limit_in_bytes`,
///   v2 `memory.max` or `memory.high`), where no anonymous page could go and
///   its own reclaim would end in the OOM killer instead of swap: what memext
///   wrote is put back (`original`, if memext wrote it);
/// - on v2, a swap limit someone else set (anything but the kernel's `max`
///   that memext did not write: a Kubernetes pod's LimitedSwap is the
///   kubelet's) is left as it is. v1's swappiness has no "unset" to tell.
pub(crate) fn keep_anon_value(
    version: Version,
    own_limit: bool,
    current: Limit,
    original: Option<Limit>,
) -> Option<Limit> {
    if own_limit {
        return original;
    }
    match version {
        Version::V2 if original.is_none() && current != Limit::Max => None,
        _ => Some(Limit::Bytes(0)),
    }
}

#[path = "act_lowering.rs"]
mod lowering;

#[cfg(test)]
#[path = "act_tests.rs"]
mod tests;
