//! Which contexts the daemon tracks: discovery's findings brought into the
//! engine (a saved model resumed, a pod's annotations applied) and the
//! contexts that left dropped, their knobs released.

use memext_cgroup::CgroupError;
use memext_engine::ContextId;

use super::{events, Daemon, Tracked};
use crate::config::Class;

impl Daemon {
    /// Brings the tracked set in line with what discovery finds now (nothing
    /// to do when the observer knows the tree has not changed).
    pub(super) fn sync_contexts(&mut self) -> anyhow::Result<()> {
        let now = self.now();
        let Some(found) = self.observer.discover_changes(&self.cfg)? else {
            return Ok(());
        };
        let mut seen = std::collections::HashSet::new();
        for ctx in found.into_iter().filter(|c| c.class != Class::Ignore) {
            let id = ContextId::new(ctx.path.as_str());
            if self.act.ledger().is_foreign(&ctx.path) || self.engine.is_left_alone(&id) {
                continue;
            }
            seen.insert(id.clone());
            if self.tracked.contains_key(&id) {
                continue;
            }
            let Some(params) = self.cfg.params(ctx.class) else {
                continue;
            };
            let params = pod_params(&self.cfg, &ctx, params);
            let cg = match self.observer.host().hierarchy.open(&ctx.path) {
                Ok(cg) => cg,
                Err(CgroupError::Vanished { .. }) => continue,
                Err(e) => return Err(e.into()),
            };
            let class = match ctx.class {
                Class::Critical => memext_engine::Class::Critical,
                _ => memext_engine::Class::Extend,
            };
            events::tracking(&ctx);
            match self.saved.remove(&id) {
                Some(state) => {
                    let (out, wakes, ws) =
                        (state.out, state.model.history.count(), state.ws.bytes());
                    self.engine.resume(state, class, params.engine());
                    events::resumed(&id, out, wakes, ws);
                }
                None => {
                    self.engine.track(id.clone(), class, params.engine(), now);
                }
            }
            self.tracked.insert(
                id,
                Tracked {
                    ctx,
                    cg,
                    sampled: None,
                },
            );
        }
        let gone: Vec<ContextId> = self
            .tracked
            .keys()
            .filter(|id| !seen.contains(*id))
            .cloned()
            .collect();
        for id in gone {
            events::gone(&id);
            self.drop_context(&id);
        }
        Ok(())
    }

    /// A context leaves the engine (its cgroup is gone, or no longer
    /// selected); its knobs are released.
    pub(super) fn drop_context(&mut self, id: &ContextId) {
        self.tracked.remove(id);
        self.engine.forget(id);
        self.act.release(&self.observer.host().hierarchy, id);
    }
}

/// A context's class parameters: the policy's, under a Kubernetes pod's own
/// `memext.io/*` annotations where the policy lets them count; annotations
/// left out are said once, when the context is first tracked.
fn pod_params(
    cfg: &crate::config::Config,
    ctx: &crate::contexts::MemoryContext,
    params: &crate::config::ClassParams,
) -> crate::config::ClassParams {
    let Some(pod) = ctx.pod.as_ref().filter(|_| cfg.runtimes.pod_annotations) else {
        return params.clone();
    };
    for problem in &pod.problems {
        tracing::warn!(context = %ctx.path, "{}: annotation left out: {problem}", ctx.path);
    }
    pod.overrides.resolve(params.clone())
}
