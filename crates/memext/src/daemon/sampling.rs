//! Reading the tracked contexts into the engine: a full sample, or for an
//! idle context a kernel event guards only its CPU time, and what each
//! reading turned out to be (a transition, or a rest logged).

use memext_cgroup::{AnyCgroup, CgroupError};
use memext_engine::{ContextId, Instant};
use std::sync::atomic::Ordering;

use super::observe::touch_ask;
use super::{events, Daemon};

impl Daemon {
    /// Samples the tracked contexts into the engine: every one, except that
    /// an idle one a kernel wake event guards is sampled only every
    /// `daemon.idle_read` (its event brings it here when it touches memory);
    /// in between, a tick checks only its CPU time (one read of a held-open
    /// file, or none when its parent's CPU time shows that nothing below it
    /// ran: [`idle_cpu`]), so that a wake that runs before it touches its
    /// pages is seen within a tick.
    pub(super) fn observe_all(&mut self) -> anyhow::Result<()> {
        let now = self.now();
        let idle_read = self.cfg.daemon.idle_read.0;
        let (full, cpu_only): (Vec<ContextId>, Vec<ContextId>) =
            self.tracked.keys().cloned().partition(|id| {
                !self.observer.guarded(id)
                    || self.tracked[id]
                        .sampled
                        .is_none_or(|at| now.saturating_sub(at) >= idle_read)
            });
        for id in full {
            if let Some(tr) = self.observe_one(&id, false)? {
                self.on_transition(&id, tr, "tick");
            }
        }
        self.idle_cpu.begin_tick();
        let hierarchy = &self.observer.host().hierarchy;
        let mut woke = Vec::new();
        for id in cpu_only {
            let t = &self.tracked[&id];
            let cpu = self.idle_cpu.cpu(hierarchy, &id, &t.ctx.path, &t.cg);
            let mut ask = touch_ask(self.observer.as_ref(), self.cfg.daemon.touches, &t.cg);
            match cpu.and_then(|cpu| self.engine.poll_asking(&id, now, cpu, &mut ask)) {
                Some(tr) => woke.push((id, tr)),
                None => self.note_rested(&id, "tick", now),
            }
        }
        self.idle_cpu.end_tick();
        for (id, tr) in woke {
            self.on_transition(&id, tr, "tick");
        }
        let tracked: Vec<(&ContextId, &AnyCgroup)> =
            self.tracked.iter().map(|(id, t)| (id, &t.cg)).collect();
        let waiting = self.observer.out_of_memory(&tracked);
        for id in waiting {
            self.serve_out_of_memory(&id)?;
        }
        Ok(())
    }

    /// Samples one context into the engine (a context whose cgroup is gone
    /// is dropped); records the working set the engine asks for. `fired`:
    /// read because its kernel event fired.
    pub(super) fn observe_one(
        &mut self,
        id: &ContextId,
        fired: bool,
    ) -> anyhow::Result<Option<memext_engine::model::Transition>> {
        let Some(t) = self.tracked.get(id) else {
            return Ok(None);
        };
        let sample = match self.observer.sample(&t.cg) {
            Ok(s) => s,
            Err(CgroupError::Vanished { .. }) => {
                events::gone(id);
                self.drop_context(id);
                return Ok(None);
            }
            Err(e) => return Err(e.into()),
        };
        let (at, moving) = (sample.at, self.act.is_busy(id));
        // Taken after the reading: what the mover says it caused by now, the
        // reading holds (or the next one will: the engine keeps the rest).
        let caused = self.act.take_faults_caused(id);
        if caused != (0, 0) {
            self.engine.faults_caused(id, caused);
        }
        if let Some(t) = self.tracked.get_mut(id) {
            t.sampled = Some(at);
        }
        let cg = &self.tracked[id].cg;
        let o = {
            let mut ask = touch_ask(self.observer.as_ref(), self.cfg.daemon.touches, cg);
            self.engine
                .observe_asking(id, sample, moving, fired, &mut ask)
        };
        if o.transition.is_none() {
            self.note_rested(id, if fired { "event" } else { "tick" }, at);
        }
        if o.wants_working_set {
            let pids = self
                .engine
                .get(id)
                .map(|t| t.pids.clone())
                .unwrap_or_default();
            let snapshot = self.observer.working_set(&pids);
            self.engine.record_working_set(id, at, &snapshot);
        }
        Ok(o.transition)
    }

    /// `Engine::poll`, the observer asked what the context touched where
    /// its CPU says "call" (`memext_engine::touch`), with `daemon.touches`.
    pub(super) fn poll_asking(
        &mut self,
        id: &ContextId,
        at: Instant,
        cpu: std::time::Duration,
    ) -> Option<memext_engine::model::Transition> {
        let cg = &self.tracked.get(id)?.cg;
        let mut ask = touch_ask(self.observer.as_ref(), self.cfg.daemon.touches, cg);
        self.engine.poll_asking(id, at, cpu, &mut ask)
    }

    /// Logs a resting context's reading that was no call (at debug level;
    /// at info level where its touch turned a call's CPU away: `no-call`).
    pub(super) fn note_rested(&self, id: &ContextId, via: &'static str, at: Instant) {
        if let Some(t) = self.engine.get(id) {
            events::rested(id, via, t, at);
        }
    }

    pub(super) fn on_transition(
        &mut self,
        id: &ContextId,
        tr: memext_engine::model::Transition,
        via: &'static str,
    ) {
        self.dirty = true;
        if let Some(t) = self.engine.get(id) {
            events::transition(id, tr, t.model.state, via, t.model.judged);
        }
        if tr == memext_engine::model::Transition::Woke {
            self.gauges.wakes.fetch_add(1, Ordering::Relaxed);
        }
    }
}
