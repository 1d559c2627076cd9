//! Between ticks: the observer watches the resting contexts the engine
//! names, and what it sees (a run, a fired kernel event, a task waiting at
//! its limit) is served at once.

use memext_cgroup::{CgroupError, MemoryCgroup};
use memext_engine::engine::Command;
use memext_engine::{ContextId, Instant};

use super::observe::{Seen, Watched};
use super::{act, events, Daemon};

impl Daemon {
    /// Until the next tick: the observer watches the contexts the engine
    /// names; a wake it sees is served at once. While nothing changed since
    /// the observer was last given them, it may wait on its own.
    pub(super) fn between_ticks(&mut self, deadline: Instant) -> anyhow::Result<()> {
        let quiet = if self.rewatch {
            None
        } else {
            self.observer.wait_events(deadline)
        };
        let seen = match quiet {
            Some(seen) => seen,
            None => self.watch(deadline),
        };
        self.rewatch |= !seen.is_empty();
        self.settle_reclaims();
        self.serve_seen(seen)
    }

    /// Gives the observer the contexts to watch (and how) and waits with it.
    pub(super) fn watch(&mut self, deadline: Instant) -> Vec<Seen> {
        self.rewatch = false;
        let watched_ids = self.engine.watched();
        let watched: Vec<Watched<'_>> = watched_ids
            .iter()
            .filter_map(|id| {
                let t = self.engine.get(id)?;
                Some(Watched {
                    id,
                    cg: &self.tracked.get(id)?.cg,
                    // Polled until its limit is down at its target: until
                    // then its swap cache is still charged, so a threshold
                    // would sit above the usage it settles at, and no limit
                    // makes it reclaim (its pressure level stays silent).
                    poll: self.act.is_busy(id)
                        || t.held.is_some()
                        || t.applied.limit.is_none_or(|(b, _)| b > t.target),
                    usage: t.memory.usage,
                })
            })
            .collect();
        self.observer.watch(&watched, deadline)
    }

    /// Serves what the observer saw: a wake is served at once.
    pub(super) fn serve_seen(&mut self, seen: Vec<Seen>) -> anyhow::Result<()> {
        for s in seen {
            use memext_engine::model::Transition;
            let (id, via, tr) = match s {
                Seen::Cpu(r) => match self.poll_asking(&r.id, r.at, r.cpu) {
                    // A warm call is only remembered: nothing to serve.
                    Some(Transition::WarmCall) => {
                        self.on_transition(&r.id, Transition::WarmCall, "poll");
                        continue;
                    }
                    Some(tr) => (r.id, "poll", tr),
                    None => {
                        self.note_rested(&r.id, "poll", r.at);
                        continue;
                    }
                },
                Seen::OutOfMemory(id) => {
                    self.serve_out_of_memory(&id)?;
                    continue;
                }
                // The kernel says it is using memory again: a full sample
                // tells the engine whether that is a wake (or an onset).
                Seen::Fired(id) => match self.observe_one(&id, true)? {
                    Some(tr @ (Transition::Woke | Transition::Onset)) => (id, "event", tr),
                    // Busy, paged out since its last call: served as an onset.
                    Some(tr @ Transition::Call) if self.engine.serves_call(&id) => {
                        (id, "event", tr)
                    }
                    Some(tr) => {
                        self.on_transition(&id, tr, "event");
                        continue;
                    }
                    None => {
                        tracing::debug!(context = %id, "kernel event, no wake");
                        continue;
                    }
                },
            };
            self.on_transition(&id, tr, via);
            // Host facts only now: a reading with no wake reads nothing more.
            let facts = self.observer.host_facts(&self.cfg)?;
            let act = &self.act;
            let at = self.now();
            let commands = self
                .engine
                .serve_wake(&id, at, &facts, &|id| act.is_busy(id));
            if let Some(room) = self.engine.take_wake_room() {
                events::room(&room, Some(&id));
            }
            if !self.act.is_dry_run() {
                self.execute(&commands);
            }
        }
        Ok(())
    }

    /// The kernel said a task of `id` waits in the OOM wait at its limit:
    /// if it still does (the event also comes when the cgroup is removed,
    /// and a raise since, a wake's, has let it go), a fresh sample (its
    /// usage now), then its limit raised past where it waits, as the engine
    /// says (and its wake served, if it rested).
    pub(super) fn serve_out_of_memory(&mut self, id: &ContextId) -> anyhow::Result<()> {
        let Some(t) = self.tracked.get(id) else {
            return Ok(());
        };
        let knob = act::memory_limit_knob(t.cg.version());
        match t.cg.under_oom() {
            Ok(true) => {}
            Ok(false) => return Ok(()),
            Err(CgroupError::Vanished { .. }) => {
                events::gone(id);
                self.drop_context(id);
                return Ok(());
            }
            Err(e) => {
                tracing::warn!(context = %id, "under_oom: {:#}", anyhow::Error::from(e));
                return Ok(());
            }
        }
        let sampled = self.observe_one(id, true)?;
        if let Some(tr) = sampled {
            self.on_transition(id, tr, "event");
        }
        let facts = self.observer.host_facts(&self.cfg)?;
        let at = self.now();
        let act = &self.act;
        let (tr, commands) = self
            .engine
            .out_of_memory(id, at, sampled, &facts, &|id| act.is_busy(id));
        if let Some(tr) = tr {
            self.on_transition(id, tr, "oom");
        }
        let raised = commands.iter().find_map(|c| match c {
            Command::Limit { id: i, bytes } if i == id => Some(*bytes),
            _ => None,
        });
        let dry = self.act.is_dry_run();
        // As the knob will hold it (the v1 charge room above the plan).
        let written = raised.map(|b| act::written_limit(knob, b));
        events::out_of_memory(id, written.filter(|_| !dry));
        if !dry {
            self.execute(&commands);
        }
        Ok(())
    }
}
