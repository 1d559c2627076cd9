//! What the daemon tells the outside: the engine's typed state for
//! `memext status` and metrics, and the mover's prefetch accuracy fed back
//! to the engine.

use std::sync::atomic::Ordering;

use memext_engine::ContextId;

use super::serve::ContextReport;
use super::{pages, Daemon};

impl Daemon {
    pub(super) fn collect_accuracy(&mut self) {
        let Some(m) = self.act.mover() else { return };
        let window = self.cfg.daemon.accuracy_window.0;
        let due: Vec<(ContextId, Vec<(u32, memext_sys::AddrRange)>)> = match m.stats.lock() {
            Ok(mut s) => s
                .iter_mut()
                .filter_map(|(k, st)| {
                    let (at, _) = st.last_bring_back.as_ref()?;
                    (at.elapsed() >= window).then(|| {
                        let ranges = st.last_bring_back.take().map(|(_, r)| r);
                        (k.clone(), ranges.unwrap_or_default())
                    })
                })
                .collect(),
            Err(_) => return,
        };
        for (id, ranges) in due {
            if let Some(a) = pages::accuracy(&ranges) {
                self.engine.set_accuracy(&id, a);
            }
        }
    }

    /// Publishes the engine's typed state for status and metrics.
    pub(super) fn publish(&self) {
        if let Some(m) = self.act.mover() {
            m.retain(|id| self.engine.contains(id));
        }
        let now = self.now();
        let stats = self
            .act
            .mover()
            .and_then(|m| m.stats.lock().ok().map(|s| s.clone()))
            .unwrap_or_default();
        let watched: std::collections::HashSet<ContextId> =
            self.engine.watched().into_iter().collect();
        let reports = self
            .engine
            .contexts()
            .filter_map(|t| {
                let ctx = &self.tracked.get(&t.id)?.ctx;
                let s = stats.get(&t.id).cloned().unwrap_or_default();
                Some(ContextReport {
                    id: ctx.identity.id.clone(),
                    runtime: ctx.identity.runtime,
                    name: ctx.name.clone(),
                    class: t.class,
                    cgroup: t.id.clone(),
                    state: t.model.state,
                    target_bytes: t.target,
                    usage_bytes: t.memory.usage,
                    resident_bytes: t.memory.resident,
                    swapped_bytes: t.memory.swapped,
                    working_set_bytes: t.working_set_bytes(),
                    last_wake_s_ago: t
                        .model
                        .history
                        .last()
                        .map(|w| now.saturating_sub(w).as_secs_f64()),
                    pushed_out_pages: s.pushed_out_pages,
                    brought_back_pages: s.brought_back_pages,
                    mapped_back_pages: s.mapped_back_pages,
                    prefetch_accuracy: t.accuracy,
                    out: t.out,
                    held: t.held.is_some(),
                    waiting: t.frozen,
                    wake_path: watched
                        .contains(&t.id)
                        .then(|| self.observer.wake_path(&t.id).to_string()),
                    limit_bytes: t.limit,
                    reclaiming_to: t.reclaiming,
                    quiet: t.is_quiet(now),
                    margin_bytes: t.growth.margin(),
                    rest_slack_bytes: t.rest_growth.rest_slack(),
                })
            })
            .collect();
        if let Ok(mut r) = self.reports.lock() {
            *r = reports;
        }
        self.gauges
            .owned_knobs
            .store(self.act.ledger().records().len(), Ordering::Relaxed);
    }
}
