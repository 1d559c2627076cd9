//! `daemon.foretold_calls`: an analysis setting. A JSON file maps cgroup
//! paths to the wall-clock times (epoch seconds) of every call each
//! context will get, and those calls stand for the engine's prediction of
//! that context (`memext_engine::history::Foretold`): the engine with
//! perfect foresight, all else as without (bench/faas writes the file
//! from its trace just before the trace begins). The file is read again
//! whenever it changes; contexts tracked later are told when found.
//!
//! Must not: decide. The calls go to the engine as given.

use std::collections::{BTreeMap, HashSet};
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use memext_engine::history::Foretold;
use memext_engine::{ContextId, Instant};

/// A larger file is refused (a day of calls every 10 ms for 100 contexts
/// is smaller).
const MAX_BYTES: u64 = 64 << 20;

#[derive(Debug, thiserror::Error)]
pub enum ForetoldError {
    #[error("reading {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is over {MAX_BYTES} bytes")]
    TooLarge { path: PathBuf },
    #[error("{path}: not a JSON object of cgroup paths to lists of epoch seconds")]
    Parse {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{path}: {cgroup} has a call time that is not a finite positive number")]
    BadTime { path: PathBuf, cgroup: String },
}

/// The calls by cgroup path, in epoch seconds (pure: from the file's text).
pub fn parse(path: &Path, text: &str) -> Result<BTreeMap<String, Vec<f64>>, ForetoldError> {
    let calls: BTreeMap<String, Vec<f64>> =
        serde_json::from_str(text).map_err(|source| ForetoldError::Parse {
            path: path.to_owned(),
            source,
        })?;
    for (cgroup, times) in &calls {
        if times.iter().any(|t| !t.is_finite() || *t <= 0.0) {
            return Err(ForetoldError::BadTime {
                path: path.to_owned(),
                cgroup: cgroup.clone(),
            });
        }
    }
    Ok(calls)
}

/// Epoch seconds `epoch` on the engine's clock, given that `now` there is
/// `epoch_now` (pure). A time before the clock's start is its start.
pub fn to_instant(epoch: f64, now: Instant, epoch_now: f64) -> Instant {
    let ahead = epoch - epoch_now;
    if ahead >= 0.0 {
        now + Duration::from_secs_f64(ahead)
    } else {
        now.saturating_sub(Duration::from_secs_f64(-ahead))
    }
}

pub struct ForetoldCalls {
    path: PathBuf,
    /// The file's modification time when last read.
    read_at: Option<SystemTime>,
    calls: BTreeMap<String, Vec<f64>>,
    /// Contexts told the calls read last, while they stay tracked (one that
    /// leaves and is found again is a new context to the engine: told again).
    told: HashSet<ContextId>,
    /// The last error was reported (said again only after a good read).
    said: bool,
}

impl ForetoldCalls {
    pub fn new(path: PathBuf) -> Self {
        Self {
            path,
            read_at: None,
            calls: BTreeMap::new(),
            told: HashSet::new(),
            said: false,
        }
    }

    /// The calls to tell contexts among `tracked` not told yet (all again
    /// when the file changed; one again when it left and came back), on the
    /// engine's clock (`now`).
    pub fn untold<T>(
        &mut self,
        tracked: &BTreeMap<ContextId, T>,
        now: Instant,
    ) -> Vec<(ContextId, Foretold)> {
        self.told.retain(|id| tracked.contains_key(id));
        if let Err(e) = self.reread() {
            if !std::mem::replace(&mut self.said, true) {
                tracing::warn!("daemon.foretold_calls: {e:#}");
            }
        }
        let epoch_now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        tracked
            .keys()
            .filter_map(|id| {
                let times = self.calls.get(id.as_str())?;
                if !self.told.insert(id.clone()) {
                    return None;
                }
                let calls = times
                    .iter()
                    .map(|&t| to_instant(t, now, epoch_now))
                    .collect();
                Some((id.clone(), Foretold::new(calls)))
            })
            .collect()
    }

    /// Reads the file again if its modification time changed.
    fn reread(&mut self) -> Result<(), ForetoldError> {
        let read = |source| ForetoldError::Read {
            path: self.path.clone(),
            source,
        };
        let meta = match std::fs::metadata(&self.path) {
            Ok(m) => m,
            // Not written yet: nothing to tell.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(read(e)),
        };
        let modified = meta.modified().map_err(read)?;
        if self.read_at == Some(modified) {
            return Ok(());
        }
        self.read_at = Some(modified);
        if meta.len() > MAX_BYTES {
            return Err(ForetoldError::TooLarge {
                path: self.path.clone(),
            });
        }
        let mut text = String::new();
        std::fs::File::open(&self.path)
            .and_then(|f| f.take(MAX_BYTES).read_to_string(&mut text))
            .map_err(read)?;
        self.calls = parse(&self.path, &text)?;
        self.told.clear();
        self.said = false;
        tracing::info!(
            event = "foretold",
            contexts = self.calls.len(),
            "daemon.foretold_calls: the calls of {} context(s) stand for their prediction",
            self.calls.len()
        );
        Ok(())
    }
}

impl super::Daemon {
    /// Calls known ahead (`daemon.foretold_calls`) to contexts not told yet.
    pub(super) fn tell_foretold(&mut self) {
        let Some(f) = self.foretold.as_mut() else {
            return;
        };
        let now = self.observer.host().clock.now();
        for (id, calls) in f.untold(&self.tracked, now) {
            self.engine.foretell(&id, calls);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The daemon's tracked contexts, as `untold` reads them.
    fn tracked<const N: usize>(ids: [&ContextId; N]) -> BTreeMap<ContextId, ()> {
        ids.into_iter().map(|id| (id.clone(), ())).collect()
    }

    #[test]
    fn parses_calls_by_cgroup_and_refuses_bad_times() {
        let p = Path::new("f.json");
        let calls = parse(
            p,
            r#"{"/faas/a": [1700000000.5, 1700000010.0], "/faas/b": []}"#,
        )
        .expect("parses");
        assert_eq!(calls["/faas/a"], vec![1_700_000_000.5, 1_700_000_010.0]);
        assert!(calls["/faas/b"].is_empty());
        assert!(matches!(
            parse(p, r#"{"/faas/a": [-1.0]}"#),
            Err(ForetoldError::BadTime { .. })
        ));
        assert!(matches!(
            parse(p, r#"["/faas/a"]"#),
            Err(ForetoldError::Parse { .. })
        ));
    }

    #[test]
    fn epoch_seconds_map_onto_the_engine_clock() {
        let now = Duration::from_secs(100);
        assert_eq!(
            to_instant(1010.5, now, 1000.0),
            Duration::from_secs_f64(110.5)
        );
        assert_eq!(to_instant(990.0, now, 1000.0), Duration::from_secs(90));
        assert_eq!(to_instant(800.0, now, 1000.0), Duration::ZERO);
    }

    #[test]
    fn contexts_are_told_once_and_again_after_the_file_changes() {
        let dir = std::env::temp_dir().join(format!("memext-foretold-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("calls.json");
        let mut f = ForetoldCalls::new(path.clone());
        let (a, b) = (ContextId::new("/faas/a"), ContextId::new("/faas/b"));
        let now = Duration::from_secs(5);
        assert!(f.untold(&tracked([&a]), now).is_empty(), "no file yet");
        std::fs::write(&path, r#"{"/faas/a": [1.0]}"#).expect("write");
        let told = f.untold(&tracked([&a, &b]), now);
        assert_eq!(told.len(), 1);
        assert_eq!(told[0].0, a);
        assert!(f.untold(&tracked([&a, &b]), now).is_empty(), "told once");
        // A later write (another modification time) is read again.
        std::thread::sleep(Duration::from_millis(20));
        std::fs::write(&path, r#"{"/faas/a": [1.0], "/faas/b": [2.0]}"#).expect("write");
        let file = std::fs::File::options()
            .write(true)
            .open(&path)
            .expect("open");
        file.set_modified(SystemTime::now() + Duration::from_secs(1))
            .expect("mtime");
        assert_eq!(f.untold(&tracked([&a, &b]), now).len(), 2);
        std::fs::remove_dir_all(&dir).expect("cleanup");
    }

    #[test]
    fn a_context_that_left_and_came_back_is_told_again() {
        let dir = std::env::temp_dir().join(format!("memext-foretold-back-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("calls.json");
        std::fs::write(&path, r#"{"/faas/a": [1.0]}"#).expect("write");
        let mut f = ForetoldCalls::new(path);
        let a = ContextId::new("/faas/a");
        let now = Duration::from_secs(5);
        assert_eq!(f.untold(&tracked([&a]), now).len(), 1);
        assert!(f.untold(&tracked([]), now).is_empty(), "gone");
        let again = f.untold(&tracked([&a]), now);
        assert_eq!(again.len(), 1, "tracked again: a new context to the engine");
        std::fs::remove_dir_all(&dir).expect("cleanup");
    }
}
