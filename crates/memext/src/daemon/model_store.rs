//! What the engine has learned, kept across daemon restarts: every context's
//! state (model and wake history, working set, pushed out or held) saved in
//! `STATE_DIR/model.json`, atomically (written aside, fsynced, renamed),
//! versioned, bounded in size. A working set is tied to its processes'
//! identity (pid and start time): on load, the chunks of a process that is
//! gone, or whose pid now belongs to another process, are dropped; a model
//! from another boot (its instants are CLOCK_MONOTONIC) is dropped whole.
//!
//! Must not: decide anything, or trust the file (it is re-validated on load).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use memext_engine::context::ContextState;
use memext_engine::engine::HEAT_LIFETIME;
use memext_engine::{ContextId, Instant};

/// Bumped when the saved form changes; another version is not read.
const VERSION: u32 = 1;
/// Chunks (2 MiB) of working set saved per context: 16 GiB, the hottest.
const MAX_CHUNKS: usize = 8192;
/// A model file larger than this is not read.
const MAX_FILE_BYTES: u64 = 64 << 20;

#[derive(Debug, thiserror::Error)]
pub enum ModelStoreError {
    #[error("writing the model to {path}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("encoding the model")]
    Encode(#[from] serde_json::Error),
}

#[derive(serde::Serialize, serde::Deserialize)]
struct SavedModel {
    version: u32,
    /// /proc/sys/kernel/random/boot_id when saved.
    boot_id: String,
    contexts: Vec<SavedContext>,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct SavedContext {
    state: ContextState,
    /// (pid, start time in clock ticks since boot) of the processes whose
    /// chunks the working set holds.
    processes: Vec<(u32, u64)>,
}

/// What a load found.
#[derive(Debug, Default)]
pub struct Loaded {
    pub contexts: BTreeMap<ContextId, ContextState>,
    /// Processes whose chunks were dropped (gone, or their pid reused).
    pub dropped_processes: usize,
    /// Why nothing was loaded, when nothing was.
    pub discarded: Option<String>,
}

pub struct ModelStore {
    path: PathBuf,
    proc_root: PathBuf,
}

impl ModelStore {
    pub fn new(state_dir: &Path, proc_root: &Path) -> Self {
        Self {
            path: state_dir.join("model.json"),
            proc_root: proc_root.into(),
        }
    }

    fn boot_id(&self) -> String {
        std::fs::read_to_string(self.proc_root.join("sys/kernel/random/boot_id"))
            .map(|s| s.trim().to_owned())
            .unwrap_or_default()
    }

    /// The start time of `pid` (clock ticks since boot), if it is running.
    fn start_time(&self, pid: u32) -> Option<u64> {
        let stat =
            std::fs::read_to_string(self.proc_root.join(pid.to_string()).join("stat")).ok()?;
        parse_start_time(&stat)
    }

    /// Saves the contexts' states, the working sets bounded to their hottest
    /// chunks. `now` ranks the chunks.
    pub fn save<'a>(
        &self,
        contexts: impl Iterator<Item = &'a ContextState>,
        now: Instant,
    ) -> Result<(), ModelStoreError> {
        let contexts = contexts
            .map(|t| {
                let mut state = t.clone();
                state.ws.keep_hottest(now, HEAT_LIFETIME, MAX_CHUNKS);
                let processes = state
                    .ws
                    .pids()
                    .into_iter()
                    .filter_map(|pid| Some((pid, self.start_time(pid)?)))
                    .collect();
                SavedContext { state, processes }
            })
            .collect();
        let model = SavedModel {
            version: VERSION,
            boot_id: self.boot_id(),
            contexts,
        };
        let text = serde_json::to_vec(&model)?;
        write_atomically(&self.path, &text).map_err(|source| ModelStoreError::Write {
            path: self.path.clone(),
            source,
        })
    }

    /// The saved contexts that are still valid here; a missing, unreadable or
    /// foreign file loads nothing (and says why).
    pub fn load(&self) -> Loaded {
        let discard = |why: String| Loaded {
            discarded: Some(why),
            ..Loaded::default()
        };
        match std::fs::metadata(&self.path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Loaded::default(),
            Err(e) => return discard(format!("{}: {e}", self.path.display())),
            Ok(m) if m.len() > MAX_FILE_BYTES => {
                return discard(format!(
                    "{} is over {MAX_FILE_BYTES} bytes",
                    self.path.display()
                ))
            }
            Ok(_) => {}
        }
        let model: SavedModel = match std::fs::read(&self.path)
            .map_err(|e| e.to_string())
            .and_then(|b| serde_json::from_slice(&b).map_err(|e| e.to_string()))
        {
            Ok(m) => m,
            Err(e) => return discard(format!("{}: {e}", self.path.display())),
        };
        if model.version != VERSION {
            return discard(format!(
                "saved by version {} of the model, not {VERSION}",
                model.version
            ));
        }
        if model.boot_id != self.boot_id() {
            return discard("saved before the last boot".into());
        }
        validate(model.contexts, |pid| self.start_time(pid))
    }
}

/// Pure: keeps of each saved context only the processes that still run with
/// the start time saved (`start_time` says what runs now).
fn validate(saved: Vec<SavedContext>, start_time: impl Fn(u32) -> Option<u64>) -> Loaded {
    let mut out = Loaded::default();
    for SavedContext {
        mut state,
        processes,
    } in saved
    {
        let alive: Vec<u32> = processes
            .iter()
            .filter(|(pid, start)| start_time(*pid) == Some(*start))
            .map(|(pid, _)| *pid)
            .collect();
        let before = state.ws.pids().len();
        state.ws.retain_pids(&alive);
        out.dropped_processes += before - state.ws.pids().len();
        state.pids.retain(|p| alive.contains(p));
        out.contexts.insert(state.id.clone(), state);
    }
    out
}

/// Pure: field 22 (starttime) of /proc/PID/stat; the command name (field 2)
/// may hold spaces and parentheses, so fields are counted after its last ')'.
fn parse_start_time(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Writes `path` so that a reader sees the old file or the new one, whole.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = path.with_extension("json.tmp");
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)?;
    std::fs::File::open(dir)?.sync_all()
}

#[cfg(test)]
#[path = "model_store_tests.rs"]
mod tests;
