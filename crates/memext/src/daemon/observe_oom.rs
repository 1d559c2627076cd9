//! The event observer's OOM watch: every tracked v1 context's OOM event
//! (`memory.oom_control`) kept armed in the epoll set while it is tracked,
//! so that a task waiting for memory at its limit is seen between ticks;
//! where the kernel refuses one, the context is read at ticks.

use std::collections::HashSet;

use memext_cgroup::{AnyCgroup, CgroupError, MemoryCgroup as _};
use memext_engine::ContextId;
use rustix::event::epoll;

use super::EventObserver;

impl EventObserver {
    /// Arms the OOM event of each newly tracked context and drops those no
    /// longer tracked; reads only where the kernel refused an event (and
    /// once at arming).
    pub(super) fn oom_waiting(&mut self, tracked: &[(&ContextId, &AnyCgroup)]) -> Vec<ContextId> {
        let ids: HashSet<&ContextId> = tracked.iter().map(|(id, _)| *id).collect();
        let gone: Vec<ContextId> = self
            .oom
            .keys()
            .filter(|id| !ids.contains(id))
            .cloned()
            .collect();
        for id in gone {
            self.disarm_oom(&id);
        }
        self.oom_refused.retain(|id| ids.contains(id));
        let mut waiting = Vec::new();
        for (id, cg) in tracked {
            let waits = if self.oom_refused.contains(*id) {
                crate::daemon::observe::under_oom(id, cg)
            } else if !self.oom.contains_key(*id) {
                // Read once after arming: a wait that began before the
                // registration is not signalled.
                self.arm_oom(id, cg);
                crate::daemon::observe::under_oom(id, cg)
            } else {
                false
            };
            if waits {
                waiting.push((*id).clone());
            }
        }
        waiting
    }
    /// Registers the OOM event of a newly tracked v1 context (nothing on
    /// v2: nothing waits so); one the kernel refuses is read at ticks.
    fn arm_oom(&mut self, id: &ContextId, cg: &AnyCgroup) {
        let Some(registered) = cg.oom_event() else {
            return;
        };
        let registered = registered.and_then(|event| {
            let token = self.next_token;
            epoll::add(
                &self.epoll,
                &event,
                epoll::EventData::new_u64(token),
                epoll::EventFlags::IN,
            )
            .map_err(|e| CgroupError::Read {
                path: cg.path().clone(),
                file: "epoll".into(),
                source: e.into(),
            })?;
            Ok((token, event))
        });
        match registered {
            Ok((token, event)) => {
                self.next_token += 1;
                self.oom_by_token.insert(token, id.clone());
                self.oom.insert(id.clone(), (token, event));
            }
            Err(CgroupError::Vanished { .. }) => {}
            Err(e) => {
                tracing::debug!(
                    context = %id,
                    "no kernel OOM event, read at ticks: {:#}",
                    anyhow::Error::from(e)
                );
                self.oom_refused.insert(id.clone());
            }
        }
    }

    fn disarm_oom(&mut self, id: &ContextId) {
        if let Some((token, event)) = self.oom.remove(id) {
            self.oom_by_token.remove(&token);
            let _ = epoll::delete(&self.epoll, &event);
        }
    }
}
