//! A context paused in the kernel's OOM wait. On v1 memext turns OOM kills
//! off where it limits, so that a wake which outruns its raise pauses rather
//! than dies. Such a task uses no CPU and charges nothing: every other
//! signal says the context is quiet, and a plan that keeps it where it is
//! keeps it there for good (bench/faas, session 24: a function's calls
//! timed out for 63 s while its limit stayed where a lowering had stopped).
//! It is served as a wake, and its limit goes up past where it waits,
//! whatever room the plan has: the parent's cap reclaims the others for it.

use super::{Command, Engine, HostFacts};
use crate::context::Applied;
use crate::model::Transition;
use crate::{ContextId, Instant};

/// The least a starved context's limit goes up by at once: enough for a
/// call's allocations to go on, not one more OOM wait per few pages.
pub const OOM_STEP: u64 = 16 << 20;

/// Where the limit of a context waiting at `limit` goes at least: a step
/// past it, a quarter of it where that is more.
pub fn oom_raise(limit: u64) -> u64 {
    limit.saturating_add(OOM_STEP.max(limit / 4))
}

impl Engine {
    /// A task of `id` waits in the OOM wait at its limit (seen at `at`;
    /// `sampled`: what the sample read for it just before found, which may
    /// be the wake itself): the transition the wait is (a wake, or an
    /// onset; none while it runs, is frozen, or the sample found it) and
    /// the commands that let it go on: those of its wake where it woke,
    /// and, where memext wrote its limit, always one at least
    /// [`oom_raise`] of it, before anything else of it.
    pub fn out_of_memory(
        &mut self,
        id: &ContextId,
        at: Instant,
        sampled: Option<Transition>,
        host: &HostFacts,
        busy: &dyn Fn(&ContextId) -> bool,
    ) -> (Option<Transition>, Vec<Command>) {
        let Some(t) = self.contexts.get_mut(id) else {
            return (None, Vec::new());
        };
        let tr = if t.frozen {
            None
        } else {
            t.model.demand(at, &t.params.model())
        };
        if tr.is_some() {
            t.held = None;
            // Its knobs matter now: each is sent (and checked) again.
            t.applied = Applied::default();
        }
        if tr == Some(Transition::Woke) {
            t.queue_wake(at);
        }
        let woke = tr.is_some() || matches!(sampled, Some(Transition::Woke | Transition::Onset));
        let mut out = if woke {
            self.serve_wake(id, at, host, busy)
        } else {
            Vec::new()
        };
        // A limit memext did not write (a container's own) is not memext's
        // to raise.
        let Some((t, limit)) = self.contexts.get(id).and_then(|t| Some((t, t.limit?))) else {
            return (tr, out);
        };
        let least = oom_raise(limit).max(t.target);
        let raise = out.iter_mut().find_map(|c| match c {
            Command::Limit { id: i, bytes } if i == id => Some(bytes),
            _ => None,
        });
        match raise {
            Some(bytes) => *bytes = (*bytes).max(least),
            None => {
                let first = out.iter().position(|c| c.id() == id).unwrap_or(out.len());
                out.insert(
                    first,
                    Command::Limit {
                        id: id.clone(),
                        bytes: least,
                    },
                );
            }
        }
        (tr, out)
    }
}
