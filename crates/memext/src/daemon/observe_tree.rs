//! Discovery on change: inotify on every directory of the memory hierarchy
//! says whether a cgroup was made, removed or moved since the last walk.

use std::collections::HashSet;
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::path::PathBuf;

use anyhow::Context as _;
use memext_engine::Instant;
use rustix::fs::inotify;

use super::{RESCAN, RESCAN_WATCHED};

/// inotify on the directories of the memory hierarchy: whether anything was
/// created or removed since the last walk.
pub(super) struct TreeWatch {
    pub(super) fd: OwnedFd,
    root: PathBuf,
    watching: HashSet<PathBuf>,
    changed: bool,
    /// Some directory could not be watched at the last walk.
    unwatched: bool,
    /// When the tree was last walked.
    last: Option<Instant>,
}

impl TreeWatch {
    pub(super) fn new(root: PathBuf) -> anyhow::Result<Self> {
        let fd = inotify::init(inotify::CreateFlags::CLOEXEC | inotify::CreateFlags::NONBLOCK)
            .context("inotify_init")?;
        Ok(Self {
            fd,
            root,
            watching: HashSet::new(),
            changed: true,
            unwatched: false,
            last: None,
        })
    }

    /// Whether the last walk still holds: nothing changed since, and it is
    /// recent.
    pub(super) fn fresh(&self, now: Instant) -> bool {
        let every = if self.unwatched {
            RESCAN
        } else {
            RESCAN_WATCHED
        };
        !self.changed && self.last.is_some_and(|at| now.saturating_sub(at) < every)
    }

    pub(super) fn walked(&mut self, now: Instant) {
        self.changed = false;
        self.last = Some(now);
    }

    /// Watches `dirs` and the root (directories already watched are kept; a
    /// removed directory's watch goes with it).
    pub(super) fn watch_all(&mut self, dirs: &[PathBuf]) {
        let mask = inotify::WatchFlags::CREATE
            | inotify::WatchFlags::DELETE
            | inotify::WatchFlags::MOVED_FROM
            | inotify::WatchFlags::MOVED_TO
            | inotify::WatchFlags::ONLYDIR;
        let keep: HashSet<&PathBuf> = dirs.iter().chain(std::iter::once(&self.root)).collect();
        self.watching.retain(|d| keep.contains(d));
        self.unwatched = false;
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
                Err(e) => {
                    tracing::debug!("inotify {}: {e}", d.display());
                    self.unwatched = true;
                }
            }
        }
    }

    /// Reads every pending inotify event; a directory made, removed or moved
    /// below a watched one means "walk again", and so does a queue overflow
    /// (events were lost). After a removal every directory is watched anew
    /// at the next walk: one made again under the same name is a new
    /// directory, not watched yet.
    pub(super) fn drain(&mut self) {
        let mut buf = [MaybeUninit::<u8>::uninit(); 4096];
        let mut reader = inotify::Reader::new(&self.fd, &mut buf);
        while let Ok(ev) = reader.next() {
            let flags = ev.events();
            if flags.contains(inotify::ReadFlags::QUEUE_OVERFLOW) {
                self.changed = true;
                self.watching.clear();
            }
            if !flags.contains(inotify::ReadFlags::ISDIR) {
                continue;
            }
            self.changed = true;
            if flags.intersects(inotify::ReadFlags::DELETE | inotify::ReadFlags::MOVED_FROM) {
                self.watching.clear();
            }
        }
    }
}
