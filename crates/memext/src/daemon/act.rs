//! The act half of a tick: carrying out a plan (every knob through the
//! ledger, page moves to the mover thread), printing it in a dry run, and the
//! poll between ticks that catches a wake within one poll interval.

use std::collections::HashSet;

use memext_cgroup::{CgroupError, Limit, LimitKnob, MemoryCgroup, Version};
use memext_engine::model::{State, Transition};
use memext_engine::planner::Action;
use memext_engine::predict::PrefetchReason;

use super::{model_params, Daemon, Tracked, HEAT_LIFETIME};
use crate::ledger::{Ledger, Written};
use crate::mover::Job;

impl Daemon {
    /// Carries out a plan: protections and raised limits first, then
    /// bring-backs, then push-outs, then lowered limits.
    pub(super) fn apply(&mut self, actions: &[Action], throttle: bool) -> anyhow::Result<()> {
        if self.opts.dry_run {
            self.print_dry_run(actions);
            return Ok(());
        }
        let slow = if throttle { 4 } else { 1 };
        let now = self.now();
        let lead = self.cfg.daemon.prefetch_lead.0;
        let order = |a: &Action, t: &Tracked| match a {
            Action::Protect { .. } => 0,
            Action::Limit { bytes, .. } if *bytes >= t.memory.usage_bytes => 1,
            Action::BringBack { .. } => 2,
            Action::PushOut { .. } => 3,
            Action::Limit { .. } => 4,
        };
        let mut sorted: Vec<&Action> = actions
            .iter()
            .filter(|a| self.tracked.contains_key(a.key()))
            .collect();
        sorted.sort_by_key(|a| order(a, &self.tracked[a.key()]));
        for a in sorted {
            let key = a.key().to_owned();
            let Some(mover) = self.mover.as_ref() else {
                break;
            };
            let busy = mover.is_busy(&key);
            let t = self
                .tracked
                .get_mut(&key)
                .expect("filtered to tracked keys");
            match a {
                Action::Protect { bytes, .. } => {
                    if t.cg.version() == Version::V2 {
                        guarded(
                            &mut self.ledger,
                            &mut self.said_foreign,
                            t,
                            LimitKnob::Min,
                            Limit::Bytes(*bytes),
                        );
                    }
                }
                Action::Limit { bytes, .. } => {
                    // Never squeeze a context while its push-out is running:
                    // the targeted page-out goes first, the limit after.
                    if *bytes < t.memory.usage_bytes && busy {
                        continue;
                    }
                    let knob = if t.cg.version() == Version::V1 {
                        // A v1 limit is hard: a wake that outruns its raise
                        // would OOM-kill the context. With OOM kills off, the
                        // task pauses instead until memext raises the limit.
                        // (v2's memory.high throttles and never kills.)
                        guarded(
                            &mut self.ledger,
                            &mut self.said_foreign,
                            t,
                            LimitKnob::V1OomKillDisable,
                            Limit::Bytes(1),
                        );
                        LimitKnob::V1Limit
                    } else {
                        LimitKnob::High
                    };
                    guarded(
                        &mut self.ledger,
                        &mut self.said_foreign,
                        t,
                        knob,
                        Limit::Bytes(*bytes),
                    );
                }
                Action::BringBack { reason, .. } => {
                    if !t.out {
                        continue; // already back (held for its predicted wake)
                    }
                    // A woken context faults its hottest pages in by itself; from
                    // zram that is as fast as memext's read (measured: in the same
                    // order, both decompressed the same pages and the wake took
                    // 0.50 s; from the end, 0.31 s). From a swap file, the
                    // process gains most from following memext's reads ahead of it.
                    let from_the_end = *reason == PrefetchReason::Woke
                        && memext_sys::swap::active_swaps()
                            .is_ok_and(|a| crate::tiers::next_area_is_zram(&a));
                    tracing::info!(
                        "{key}: bringing back ({reason}{})",
                        if from_the_end { ", from the end" } else { "" }
                    );
                    let order = t.ws.ranked(self.start.elapsed(), HEAT_LIFETIME);
                    let bandwidth = t.params.prefetch_bandwidth.0 / slow;
                    mover.submit(Job::BringBack {
                        key: key.clone(),
                        pids: t.pids.clone(),
                        order,
                        bandwidth,
                        // Mapping is for a wake still `prefetch_lead` away: a context
                        // already touching its pages (woke) or about to (its leader
                        // woke, it follows within a second) would race the collapse
                        // and lose (measured: a follower's touch went from 0.17 s to
                        // 0.9 s), so those get the read-back alone.
                        map_back: t.params.map_back && *reason == PrefetchReason::Periodic,
                        from_the_end,
                    });
                    t.out = false;
                    // Held until well past the predicted wake; a wake ends it sooner.
                    t.held = (*reason != PrefetchReason::Woke).then(|| (now + 2 * lead, *reason));
                }
                Action::PushOut { keep, .. } => {
                    if busy || t.out {
                        continue;
                    }
                    tracing::info!(
                        "{key}: pushing out, keeping {}",
                        crate::units::human_bytes(*keep)
                    );
                    let keep =
                        t.ws.hottest(self.start.elapsed(), HEAT_LIFETIME, *keep)
                            .into_iter()
                            .collect();
                    let bandwidth = t.params.pageout_bandwidth.0 / slow;
                    mover.submit(Job::PushOut {
                        key: key.clone(),
                        pids: t.pids.clone(),
                        keep,
                        bandwidth,
                    });
                    t.out = true;
                }
            }
        }
        Ok(())
    }

    pub(super) fn print_dry_run(&mut self, actions: &[Action]) {
        for (key, t) in &mut self.tracked {
            let mine: Vec<String> = actions
                .iter()
                .filter(|a| a.key() == key)
                .map(|a| match a {
                    Action::PushOut { keep, .. } => {
                        format!("push out to {}", crate::units::human_bytes(*keep))
                    }
                    Action::BringBack { reason, .. } => format!("bring back ({reason})"),
                    Action::Limit { bytes, .. } => {
                        format!("limit {}", crate::units::human_bytes(*bytes))
                    }
                    Action::Protect { bytes, .. } => {
                        format!("protect {}", crate::units::human_bytes(*bytes))
                    }
                })
                .collect();
            let line = mine.join(", ");
            if line != t.said {
                println!(
                    "dry-run: {key} [{}]: {}",
                    t.model.state,
                    if line.is_empty() { "nothing" } else { &line }
                );
                t.said = line;
            }
        }
    }

    /// Between ticks: catch the wake of a pushed-out context within one poll
    /// interval, from its CPU counter alone, and start bringing it back at once.
    /// A context held for its predicted wake is watched too: mapped back, its
    /// wake takes no fault and a few ms of CPU, which a tick-long window dilutes
    /// below the activity threshold; a wake missed there is missing from its
    /// history, and the next prediction with it.
    pub(super) fn poll_idle(&mut self) -> anyhow::Result<()> {
        let now = self.now();
        let mut woke = Vec::new();
        for (key, t) in &mut self.tracked {
            if t.model.state != State::Idle || !(t.out || t.held.is_some()) {
                continue;
            }
            let cpu = match t.cg.cpu_usage() {
                Ok(c) => c.unwrap_or_default(),
                Err(_) => continue, // vanished: the next tick drops it
            };
            let c = t.counters(now, cpu);
            if t.model.observe(c, &model_params(&t.params)) == Some(Transition::Woke) {
                woke.push(key.clone());
            }
        }
        for key in woke {
            tracing::info!("{key}: woke (poll)");
            if let Some(t) = self.tracked.get_mut(&key) {
                t.held = None; // the wake it was held for has come
            }
            self.gauges
                .wakes
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let t = &self.tracked[&key];
            let bytes = t.memory.usage_bytes.max(t.ws.bytes()) + t.memory.swap_bytes;
            let action = [
                Action::Limit {
                    key: key.clone(),
                    bytes: bytes.max(t.target),
                },
                Action::BringBack {
                    key: key.clone(),
                    reason: PrefetchReason::Woke,
                },
            ];
            self.apply(&action, false)?;
        }
        Ok(())
    }
}

/// A knob write through the ledger; someone else's knob is reported once.
fn guarded(
    ledger: &mut Ledger,
    said: &mut HashSet<String>,
    t: &Tracked,
    knob: LimitKnob,
    value: Limit,
) {
    match ledger.write(&t.cg, knob, value) {
        Ok(Written::Foreign { found, ours }) => {
            if said.insert(t.ctx.path.to_string()) {
                tracing::warn!(
                    "{}: {knob} is {found}, not the {ours} memext wrote; someone else manages it now, memext leaves this context alone",
                    t.ctx.path
                );
            }
        }
        Ok(_) => {}
        Err(crate::ledger::LedgerError::Cgroup(CgroupError::Vanished { .. })) => {}
        Err(e) => tracing::warn!("{}: {knob} = {value}: {e:#}", t.ctx.path),
    }
}
