//! The event-driven observer: what an idle context costs follows what it
//! does, not how many there are.
//!
//! - **Wakes** of watched (pushed-out) contexts come from the kernel: a v1
//!   usage threshold a little above the context's usage, or a PSI trigger on
//!   its `memory.pressure` (v2). All of them wait in one epoll set; between
//!   ticks nothing is read unless one fires. A context whose cgroup offers
//!   neither is polled as before (`daemon.poll`).
//! - **Discovery** is incremental: inotify on the memory hierarchy's
//!   directories marks the tree changed; the tick walks it again only then
//!   (and every [`RESCAN`] while a directory could not be watched, every
//!   [`RESCAN_WATCHED`] otherwise: names a runtime writes after it made the
//!   cgroup), and otherwise tells the daemon nothing changed.
//! - Between ticks, while every watched context has its kernel event, the
//!   loop only waits on the epoll set ([`Observer::wait_events`]): nothing
//!   is done per context unless its event fires.
//!
//! - v1 thresholds are registered on threads of their own (`arming`): each
//!   registration waits for an RCU grace period. A context is polled until
//!   its threshold is in place.
//! - Wake events no longer needed are closed on a thread of their own
//!   (`closer`): closing a v2 PSI trigger waits for a grace period.
//!
//! Samples, working sets and host facts are read as the polling observer
//! reads them. Must not: write anything but the kernel's event registrations,
//! or decide anything.

use std::collections::{HashMap, HashSet};
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use memext_cgroup::{AnyCgroup, CgroupError, MemoryCgroup as _, WakeEvent};
use memext_engine::context::Sample;
use memext_engine::engine::HostFacts;
use memext_engine::{ContextId, Instant};
use rustix::event::epoll;

use super::arming::Arming;
use super::closer::Closer;
use super::observe::{read_cpu, Host, Observer, PollingObserver, Seen, WakePath, Watched};
use crate::config::Config;
use crate::contexts::MemoryContext;
use tree::TreeWatch;

/// A usage threshold this far above the usage at arming: a few hundred pages
/// faulted back (the kernel checks thresholds every 128 charged pages).
pub const WAKE_DELTA: u64 = 512 << 10;

/// The tree is walked again at least this often while some directory of it
/// has no inotify watch (the kernel refused one: out of watches).
pub const RESCAN: Duration = Duration::from_secs(30);

/// ... and this often while every directory is watched: inotify reports
/// every cgroup made or removed below a watched one (and says when its queue
/// overflowed); the walk also picks up container names a runtime wrote after
/// it made the cgroup.
pub const RESCAN_WATCHED: Duration = Duration::from_secs(300);

/// The epoll token of the inotify descriptor; contexts count up from 1.
const TREE: u64 = 0;
/// The epoll token of the registrations done (`Arming`).
const ARMING: u64 = u64::MAX;

pub struct EventObserver {
    inner: PollingObserver,
    poll: Duration,
    epoll: OwnedFd,
    tree: TreeWatch,
    armed: HashMap<ContextId, Armed>,
    by_token: HashMap<u64, ContextId>,
    next_token: u64,
    /// Watched contexts without a kernel event, and when each was last read.
    polled: HashMap<ContextId, Instant>,
    /// Contexts the kernel offers no wake event for (polled while watched).
    refused: HashSet<ContextId>,
    /// Every tracked v1 context's OOM event, kept armed while it is tracked.
    oom: HashMap<ContextId, (u64, WakeEvent)>,
    oom_by_token: HashMap<u64, ContextId>,
    /// Tracked v1 contexts the kernel refused an OOM event (read at ticks).
    oom_refused: HashSet<ContextId>,
    /// The threads registering v1 thresholds and the contexts waiting for
    /// theirs, polled meanwhile (none: registered in the loop).
    arming: Option<Arming>,
    /// Where wake events no longer needed are closed (a v2 PSI trigger's
    /// close waits for a grace period).
    closer: Closer<WakeEvent>,
}

struct Armed {
    token: u64,
    event: WakeEvent,
    /// The context's sampled usage the daemon gave when it was armed.
    usage: u64,
}

impl Armed {
    /// A newer sample shows the usage well below where the threshold was
    /// placed (pages still under writeback when it was armed have gone
    /// since): the threshold would let a wake of a few MiB pass unseen.
    fn sits_too_high(&self, usage: u64) -> bool {
        usage != self.usage
            && self
                .event
                .threshold()
                .is_some_and(|t| t > usage.saturating_add(2 * WAKE_DELTA))
    }
}

impl EventObserver {
    pub fn new(host: Host, poll: Duration) -> anyhow::Result<Self> {
        let epoll = epoll::create(epoll::CreateFlags::CLOEXEC).context("epoll_create")?;
        let tree = TreeWatch::new(host.hierarchy.memory_root.clone())?;
        epoll::add(
            &epoll,
            &tree.fd,
            epoll::EventData::new_u64(TREE),
            epoll::EventFlags::IN,
        )
        .context("epoll_ctl(inotify)")?;
        let arming = match Arming::start() {
            Ok(a) => epoll::add(
                &epoll,
                &a,
                epoll::EventData::new_u64(ARMING),
                epoll::EventFlags::IN,
            )
            .map(|()| a)
            .map_err(std::io::Error::from),
            Err(e) => Err(e),
        };
        let arming = arming
            .inspect_err(|e| tracing::warn!("v1 thresholds registered in the daemon's loop: {e}"))
            .ok();
        Ok(Self {
            inner: PollingObserver::new(host, poll),
            poll,
            epoll,
            tree,
            armed: HashMap::new(),
            by_token: HashMap::new(),
            next_token: TREE + 1,
            polled: HashMap::new(),
            refused: HashSet::new(),
            oom: HashMap::new(),
            oom_by_token: HashMap::new(),
            oom_refused: HashSet::new(),
            arming,
            closer: Closer::start("memext-closer").unwrap_or_else(|e| {
                tracing::warn!("wake events closed in the daemon's loop: {e}");
                Closer::inline()
            }),
        })
    }

    /// Asks the arming threads for a v1 context's threshold; false where
    /// they cannot (v2, no threads): the loop registers it.
    fn ask(&mut self, w: &Watched<'_>) -> bool {
        let Some(arming) = &mut self.arming else {
            return false;
        };
        match w.cg.threshold_registrar() {
            Some(Ok(registrar)) => {
                arming.ask(w.id, w.usage, self.next_token, registrar, WAKE_DELTA);
                self.next_token += 1;
                true
            }
            Some(Err(_)) | None => false,
        }
    }

    /// Puts in place the thresholds registered since the last call, of the
    /// contexts still watched as they were asked for; one CPU reading of
    /// each covers a wake between its last poll and the registration.
    fn take_armed(&mut self, watched: &[Watched<'_>], out: &mut Vec<Seen>) {
        let done = self.arming.as_mut().map(Arming::take).unwrap_or_default();
        for r in done {
            let (id, token, usage) = (r.id, r.token, r.usage);
            let Some(w) = watched.iter().find(|w| *w.id == id && !w.poll) else {
                continue;
            };
            let placed = r.result.and_then(|event| self.place(w, token, event));
            match placed {
                Ok(event) => {
                    self.polled.remove(&id);
                    self.by_token.insert(token, id.clone());
                    self.armed.insert(
                        id,
                        Armed {
                            token,
                            event,
                            usage,
                        },
                    );
                    out.extend(read_cpu(w, self.inner.host().clock.as_ref()).map(Seen::Cpu));
                }
                Err(CgroupError::Vanished { .. }) => {}
                Err(e) => self.refuse(w, e),
            }
        }
    }

    /// Whether `id` waits for its threshold from the arming threads.
    fn pending(&self, id: &ContextId) -> bool {
        self.arming.as_ref().is_some_and(|a| a.is_pending(id))
    }

    /// Adds a registered event to the epoll set under `token`.
    fn place(
        &self,
        w: &Watched<'_>,
        token: u64,
        event: WakeEvent,
    ) -> Result<WakeEvent, CgroupError> {
        let flags = if event.wants_priority() {
            epoll::EventFlags::PRI
        } else {
            epoll::EventFlags::IN
        };
        epoll::add(&self.epoll, &event, epoll::EventData::new_u64(token), flags).map_err(|e| {
            CgroupError::Read {
                path: w.cg.path().clone(),
                file: "epoll".into(),
                source: e.into(),
            }
        })?;
        Ok(event)
    }

    /// A context the kernel offers no wake event: polled while watched.
    fn refuse(&mut self, w: &Watched<'_>, e: CgroupError) {
        tracing::debug!(
            context = %w.id,
            "no kernel wake event, polling: {:#}",
            anyhow::Error::from(e)
        );
        let now = self.inner.host().clock.now();
        self.refused.insert(w.id.clone());
        self.polled
            .insert(w.id.clone(), now.saturating_sub(self.poll));
    }

    /// Drops `id`'s wake event: out of the epoll set here, closed (and so
    /// removed from the kernel) on the closer's thread.
    fn disarm(&mut self, id: &ContextId) {
        let Some(a) = self.armed.remove(id) else {
            return;
        };
        self.by_token.remove(&a.token);
        let _ = epoll::delete(&self.epoll, &a.event);
        self.closer.close(a.event);
    }

    /// Registers a wake event for a newly watched context (v1: asks the
    /// arming threads, and polls it until it is in place); one CPU reading
    /// covers a wake between its last sample and the arming. A context the
    /// kernel offers no event for is polled.
    fn arm(&mut self, w: &Watched<'_>, out: &mut Vec<Seen>) {
        if self.ask(w) {
            let now = self.inner.host().clock.now();
            self.polled
                .insert(w.id.clone(), now.saturating_sub(self.poll));
            return;
        }
        let token = self.next_token;
        let registered =
            w.cg.wake_event(WAKE_DELTA)
                .and_then(|event| self.place(w, token, event));
        match registered {
            Ok(event) => {
                self.next_token += 1;
                self.by_token.insert(token, w.id.clone());
                self.armed.insert(
                    w.id.clone(),
                    Armed {
                        token,
                        event,
                        usage: w.usage,
                    },
                );
                out.extend(read_cpu(w, self.inner.host().clock.as_ref()).map(Seen::Cpu));
            }
            // Dropped at the next tick.
            Err(CgroupError::Vanished { .. }) => {}
            Err(e) => self.refuse(w, e),
        }
    }

    /// Waits until `until` for kernel events; returns what fired: wakes
    /// (their registration is dropped: a context still watched after its
    /// sample is armed again, above its new usage) and OOM waits (their
    /// registration stays).
    fn wait(&mut self, until: Instant) -> Vec<Seen> {
        let clock = self.inner.host().clock.clone();
        let left = until.saturating_sub(clock.now());
        let timeout = rustix::time::Timespec {
            tv_sec: i64::try_from(left.as_secs()).unwrap_or(i64::MAX),
            tv_nsec: i64::from(left.subsec_nanos()),
        };
        let mut events = Vec::with_capacity(64);
        if epoll::wait(
            &self.epoll,
            rustix::buffer::spare_capacity(&mut events),
            Some(&timeout),
        )
        .is_err()
        {
            // EINTR (a signal: the loop checks its stop flag) or worse; the
            // next call waits again.
            return Vec::new();
        }
        let mut fired = Vec::new();
        for e in &events {
            let token = e.data.u64();
            if token == TREE {
                self.tree.drain();
                continue;
            }
            // Registrations done: put in place at the next `watch`
            // (`wait_events` leaves the loop to it while any wait).
            if token == ARMING {
                if let Some(a) = &mut self.arming {
                    a.collect();
                }
                continue;
            }
            if let Some(id) = self.by_token.get(&token).cloned() {
                self.disarm(&id);
                fired.push(Seen::Fired(id));
            } else if let Some(id) = self.oom_by_token.get(&token) {
                if let Some((_, ev)) = self.oom.get(id) {
                    ev.clear();
                }
                fired.push(Seen::OutOfMemory(id.clone()));
            }
        }
        fired
    }
}

impl Observer for EventObserver {
    fn host(&self) -> &Host {
        self.inner.host()
    }

    fn discover(&mut self, cfg: &Config) -> anyhow::Result<Vec<MemoryContext>> {
        let now = self.inner.host().clock.now();
        self.tree.drain();
        let found = self.inner.discover(cfg)?;
        let h = &self.inner.host().hierarchy;
        let dirs: Vec<PathBuf> = h
            .walk()?
            .into_iter()
            .filter(|p| {
                p.components()
                    .next()
                    .is_none_or(|top| !cfg.host.leave_alone.iter().any(|l| l == top))
            })
            .map(|p| p.under(&h.memory_root))
            .collect();
        self.tree.watch_all(&dirs);
        self.tree.walked(now);
        Ok(found)
    }

    fn discover_changes(&mut self, cfg: &Config) -> anyhow::Result<Option<Vec<MemoryContext>>> {
        self.tree.drain();
        if self.tree.fresh(self.inner.host().clock.now()) {
            return Ok(None);
        }
        self.discover(cfg).map(Some)
    }

    fn sample(&mut self, cg: &AnyCgroup) -> Result<Sample, CgroupError> {
        self.inner.sample(cg)
    }

    fn working_set(&mut self, pids: &[u32]) -> Vec<(u32, Vec<(u64, u64)>)> {
        self.inner.working_set(pids)
    }

    fn host_facts(&mut self, cfg: &Config) -> anyhow::Result<HostFacts> {
        self.inner.host_facts(cfg)
    }

    fn watch(&mut self, watched: &[Watched<'_>], deadline: Instant) -> Vec<Seen> {
        let clock = self.inner.host().clock.clone();
        let mut out = Vec::new();
        self.take_armed(watched, &mut out);
        let now = clock.now();
        // Polled: those the daemon asks to poll (pages still moving, or held
        // for a wake that takes no fault), those the kernel refused an event
        // and those whose threshold is being registered.
        let asked: HashSet<&ContextId> = watched
            .iter()
            .filter(|w| w.poll || self.refused.contains(w.id))
            .map(|w| w.id)
            .collect();
        let all: HashSet<&ContextId> = watched.iter().map(|w| w.id).collect();
        if let Some(a) = &mut self.arming {
            a.cancel_unless(|id| all.contains(id) && !asked.contains(id));
        }
        let polled: HashSet<&ContextId> = watched
            .iter()
            .filter(|w| asked.contains(w.id) || self.pending(w.id))
            .map(|w| w.id)
            .collect();
        self.refused.retain(|id| all.contains(id));
        self.polled.retain(|id, _| polled.contains(id));
        // Armed: the rest; a threshold left too high above the usage is
        // placed anew.
        let mut stale: Vec<ContextId> = self
            .armed
            .keys()
            .filter(|id| !all.contains(id) || polled.contains(id))
            .cloned()
            .collect();
        stale.extend(watched.iter().filter_map(|w| {
            let a = self.armed.get(w.id)?;
            a.sits_too_high(w.usage).then(|| w.id.clone())
        }));
        for id in stale {
            self.disarm(&id);
        }
        for w in watched {
            if polled.contains(w.id) {
                self.polled.entry(w.id.clone()).or_insert(now);
            } else if !self.armed.contains_key(w.id) {
                self.arm(w, &mut out);
            }
        }
        if !out.is_empty() {
            return out;
        }
        let next_poll = self.polled.values().min().map(|&at| at + self.poll);
        let until = next_poll.map_or(deadline, |p| p.min(deadline));
        out.extend(self.wait(until));
        let now = clock.now();
        for w in watched {
            let due = self
                .polled
                .get(w.id)
                .is_some_and(|&at| now.saturating_sub(at) >= self.poll);
            if due {
                self.polled.insert(w.id.clone(), now);
                out.extend(read_cpu(w, clock.as_ref()).map(Seen::Cpu));
            }
        }
        out
    }

    fn wait_events(&mut self, deadline: Instant) -> Option<Vec<Seen>> {
        if !self.polled.is_empty() || self.arming.as_ref().is_some_and(Arming::has_arrived) {
            return None;
        }
        Some(self.wait(deadline))
    }

    fn wake_path(&self, id: &ContextId) -> WakePath {
        match self.armed.get(id) {
            Some(a) => WakePath::Event(a.event.source()),
            None => WakePath::Poll,
        }
    }

    fn guarded(&self, id: &ContextId) -> bool {
        self.armed.contains_key(id)
    }

    fn out_of_memory(&mut self, tracked: &[(&ContextId, &AnyCgroup)]) -> Vec<ContextId> {
        self.oom_waiting(tracked)
    }
}

#[path = "observe_oom.rs"]
mod oom;

#[path = "observe_tree.rs"]
mod tree;

#[cfg(test)]
#[path = "observe_events_tests.rs"]
mod tests;
