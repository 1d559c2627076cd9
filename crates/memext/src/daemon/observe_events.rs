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
//!   (and every [`RESCAN`] as a safety net against a missed event).
//!
//! Samples, working sets and host facts are read as the polling observer
//! reads them. Must not: write anything but the kernel's event registrations,
//! or decide anything.

use std::collections::{HashMap, HashSet};
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use memext_cgroup::{AnyCgroup, CgroupError, MemoryCgroup as _, WakeEvent};
use memext_engine::context::Sample;
use memext_engine::engine::HostFacts;
use memext_engine::{ContextId, Instant};
use rustix::event::epoll;
use rustix::fs::inotify;

use super::observe::{read_cpu, Host, Observer, PollingObserver, Seen, WakePath, Watched};
use crate::config::Config;
use crate::contexts::MemoryContext;

/// A usage threshold this far above the usage at arming: a few hundred pages
/// faulted back (the kernel checks thresholds every 128 charged pages).
pub const WAKE_DELTA: u64 = 512 << 10;

/// The tree is walked again at least this often, events or not; a usage
/// threshold is placed again this often (the usage it was placed above may
/// have fallen since: pages still under writeback when it was armed).
pub const RESCAN: Duration = Duration::from_secs(30);

/// The epoll token of the inotify descriptor; contexts count up from 1.
const TREE: u64 = 0;

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
}

struct Armed {
    token: u64,
    event: WakeEvent,
    at: Instant,
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
        })
    }

    fn disarm(&mut self, id: &ContextId) -> Option<WakeEvent> {
        let a = self.armed.remove(id)?;
        self.by_token.remove(&a.token);
        // Closing the descriptor removes it from the epoll set and the kernel.
        let _ = epoll::delete(&self.epoll, &a.event);
        Some(a.event)
    }

    /// Registers a wake event for a newly watched context; one CPU reading
    /// covers a wake between its last sample and the arming. A context the
    /// kernel offers no event for is polled.
    fn arm(&mut self, w: &Watched<'_>, out: &mut Vec<Seen>) {
        let now = self.inner.host().clock.now();
        let registered = w.cg.wake_event(WAKE_DELTA).and_then(|event| {
            let token = self.next_token;
            let flags = if event.wants_priority() {
                epoll::EventFlags::PRI
            } else {
                epoll::EventFlags::IN
            };
            epoll::add(&self.epoll, &event, epoll::EventData::new_u64(token), flags).map_err(
                |e| CgroupError::Read {
                    path: w.cg.path().clone(),
                    file: "epoll".into(),
                    source: e.into(),
                },
            )?;
            Ok((token, event))
        });
        match registered {
            Ok((token, event)) => {
                self.next_token += 1;
                self.by_token.insert(token, w.id.clone());
                self.armed.insert(
                    w.id.clone(),
                    Armed {
                        token,
                        event,
                        at: now,
                    },
                );
                out.extend(read_cpu(w, self.inner.host().clock.as_ref()).map(Seen::Cpu));
            }
            // Dropped at the next tick.
            Err(CgroupError::Vanished { .. }) => {}
            Err(e) => {
                tracing::debug!(
                    context = %w.id,
                    "no kernel wake event, polling: {:#}",
                    anyhow::Error::from(e)
                );
                self.refused.insert(w.id.clone());
                self.polled
                    .insert(w.id.clone(), now.saturating_sub(self.poll));
            }
        }
    }

    /// Waits until `until` for kernel events; returns the contexts whose
    /// event fired (their registration is dropped: a context still watched
    /// after its sample is armed again, above its new usage).
    fn wait(&mut self, until: Instant) -> Vec<ContextId> {
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
            if let Some(id) = self.by_token.get(&token).cloned() {
                if let Some(ev) = self.disarm(&id) {
                    ev.clear();
                }
                fired.push(id);
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
        if let Some(found) = self.tree.fresh(now) {
            return Ok(found);
        }
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
        self.tree.walked(now, found.clone());
        Ok(found)
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
        let now = clock.now();
        // Polled: those the daemon asks to poll (pages still moving, or held
        // for a wake that takes no fault) and those the kernel refused an event.
        let polled: HashSet<&ContextId> = watched
            .iter()
            .filter(|w| w.poll || self.refused.contains(w.id))
            .map(|w| w.id)
            .collect();
        let all: HashSet<&ContextId> = watched.iter().map(|w| w.id).collect();
        self.refused.retain(|id| all.contains(id));
        self.polled.retain(|id, _| polled.contains(id));
        // Armed: the rest; an old registration is placed anew above the
        // usage now.
        let stale: Vec<ContextId> = self
            .armed
            .iter()
            .filter(|(id, a)| {
                !all.contains(id) || polled.contains(id) || now.saturating_sub(a.at) >= RESCAN
            })
            .map(|(id, _)| id.clone())
            .collect();
        for id in stale {
            self.disarm(&id);
        }
        let mut out = Vec::new();
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
        out.extend(self.wait(until).into_iter().map(Seen::Fired));
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

    fn wake_path(&self, id: &ContextId) -> WakePath {
        match self.armed.get(id) {
            Some(a) => WakePath::Event(a.event.source()),
            None => WakePath::Poll,
        }
    }

    fn guarded(&self, id: &ContextId) -> bool {
        self.armed.contains_key(id)
    }
}

/// inotify on the directories of the memory hierarchy: whether anything was
/// created or removed since the last walk.
struct TreeWatch {
    fd: OwnedFd,
    root: PathBuf,
    watching: HashSet<PathBuf>,
    changed: bool,
    last: Option<(Instant, Vec<MemoryContext>)>,
}

impl TreeWatch {
    fn new(root: PathBuf) -> anyhow::Result<Self> {
        let fd = inotify::init(inotify::CreateFlags::CLOEXEC | inotify::CreateFlags::NONBLOCK)
            .context("inotify_init")?;
        Ok(Self {
            fd,
            root,
            watching: HashSet::new(),
            changed: true,
            last: None,
        })
    }

    /// What the last walk found, if nothing changed since and it is recent.
    fn fresh(&self, now: Instant) -> Option<Vec<MemoryContext>> {
        match &self.last {
            Some((at, found)) if !self.changed && now.saturating_sub(*at) < RESCAN => {
                Some(found.clone())
            }
            _ => None,
        }
    }

    fn walked(&mut self, now: Instant, found: Vec<MemoryContext>) {
        self.changed = false;
        self.last = Some((now, found));
    }

    /// Watches `dirs` and the root (directories already watched are kept; a
    /// removed directory's watch goes with it).
    fn watch_all(&mut self, dirs: &[PathBuf]) {
        let mask = inotify::WatchFlags::CREATE
            | inotify::WatchFlags::DELETE
            | inotify::WatchFlags::MOVED_FROM
            | inotify::WatchFlags::MOVED_TO
            | inotify::WatchFlags::ONLYDIR;
        let keep: HashSet<&PathBuf> = dirs.iter().chain(std::iter::once(&self.root)).collect();
        self.watching.retain(|d| keep.contains(d));
        for d in keep {
            if self.watching.contains(d) {
                continue;
            }
            match inotify::add_watch(&self.fd, d, mask) {
                Ok(_) => {
                    self.watching.insert(d.clone());
                }
                // Removed meanwhile: the next walk will not list it. Out of
                // watches: the rescan still finds every change.
                Err(e) => tracing::debug!("inotify {}: {e}", d.display()),
            }
        }
    }

    /// Reads every pending inotify event; a directory made, removed or moved
    /// below a watched one means "walk again".
    fn drain(&mut self) {
        let mut buf = [MaybeUninit::<u8>::uninit(); 4096];
        let mut reader = inotify::Reader::new(&self.fd, &mut buf);
        while let Ok(ev) = reader.next() {
            if ev.events().contains(inotify::ReadFlags::ISDIR) {
                self.changed = true;
            }
        }
    }
}

#[cfg(test)]
#[path = "observe_events_tests.rs"]
mod tests;
