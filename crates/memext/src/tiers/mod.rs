//! `memext tiers up|status|down`: the slower memory tiers behind DRAM —
//! compressed RAM (a zram device or zswap) and swap files on flash — set up
//! from the config, idempotently. memext records what it made in a state file
//! and `down` removes exactly that and restores the zswap settings, swap
//! read-ahead and large-folio setting it changed;
//! swap areas and settings it did not make are never touched.

use std::path::{Path, PathBuf};

use memext_sys::swap::{active_swaps, swap_off, SwapError};

use crate::config::{SwapFileConfig, TiersConfig, ZramConfig, ZswapConfig};

mod devices;
pub mod guard;
mod plan;

use devices::*;
pub use plan::*;

#[derive(Debug, thiserror::Error)]
pub enum TierError {
    #[error(
        "swap file {path} would be on {fs}, which cannot hold swap; put it on a disk file system"
    )]
    BadFilesystem { path: PathBuf, fs: &'static str },
    #[error("swap file {path} needs {need} bytes but only {free} are free on its file system")]
    NoSpace { path: PathBuf, need: u64, free: u64 },
    #[error("{path} already exists and memext did not make it; remove it or choose another path")]
    Exists { path: PathBuf },
    #[error("the kernel's zram lacks compression algorithm {algorithm:?} (it has: {available})")]
    ZramAlgorithm {
        algorithm: String,
        available: String,
    },
    #[error("the kernel lacks zswap compressor {compressor:?} (known compressors: {available})")]
    ZswapCompressor {
        compressor: String,
        available: String,
    },
    #[error("this kernel has no {what}")]
    Missing { what: &'static str },
    #[error("this kernel has no anonymous large folios of {kib} KiB (it has: {available})")]
    LargeFolioSize { kib: u64, available: String },
    #[error("{op} {path} failed")]
    Io {
        op: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("mkswap {path} failed: {stderr}")]
    Mkswap { path: PathBuf, stderr: String },
    #[error(transparent)]
    Swap(#[from] SwapError),
    #[error("tier state file {path} is corrupt")]
    State {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
}

fn io<'a>(op: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> TierError + 'a {
    move |source| TierError::Io {
        op,
        path: path.into(),
        source,
    }
}

/// What memext made, kept in `STATE_DIR/tiers.json`.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TierState {
    pub zram: Option<ZramMade>,
    pub zswap: Option<ZswapSaved>,
    #[serde(default)]
    pub swapfiles: Vec<PathBuf>,
    /// `vm.page-cluster` before memext set it.
    #[serde(default)]
    pub page_cluster: Option<String>,
    /// The large-folio setting memext changed, and its value before.
    #[serde(default)]
    pub large_folios: Option<LargeFoliosSaved>,
}

/// One size of anonymous large folios and its `enabled` before memext set it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LargeFoliosSaved {
    pub kib: u64,
    pub enabled: String,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ZramMade {
    pub index: u32,
    pub priority: i32,
}

impl ZramMade {
    pub fn device(&self) -> PathBuf {
        PathBuf::from(format!("/dev/zram{}", self.index))
    }
}

/// zswap's settings before memext changed them.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ZswapSaved {
    pub enabled: String,
    pub compressor: String,
    pub max_pool_percent: String,
}

/// One step of bringing the tiers up.
#[derive(Debug, Clone, PartialEq)]
pub enum TierAction {
    MakeZram(ZramConfig),
    ConfigureZswap(ZswapConfig),
    MakeSwapFile(SwapFileConfig),
    /// `vm.page-cluster` set (the host's value saved first).
    SetPageCluster(u8),
    /// Anonymous large folios of this many KiB set to `always` (the host's
    /// setting saved first).
    SetLargeFolios(u64),
}

/// The tier state on disk.
pub struct StateFile {
    path: PathBuf,
}

impl StateFile {
    pub fn new(state_dir: &Path) -> Self {
        Self {
            path: state_dir.join("tiers.json"),
        }
    }

    pub fn load(&self) -> Result<TierState, TierError> {
        match std::fs::read_to_string(&self.path) {
            Ok(t) => serde_json::from_str(&t).map_err(|source| TierError::State {
                path: self.path.clone(),
                source,
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(TierState::default()),
            Err(e) => Err(io("read", &self.path)(e)),
        }
    }

    /// Written after every step, atomically, so a crash never loses track of
    /// something memext made.
    pub fn save(&self, s: &TierState) -> Result<(), TierError> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(io("create", dir))?;
        }
        let tmp = self.path.with_extension("json.tmp");
        let text = serde_json::to_string_pretty(s).expect("tier state serialises");
        std::fs::write(&tmp, text).map_err(io("write", &tmp))?;
        std::fs::rename(&tmp, &self.path).map_err(io("rename", &self.path))
    }

    pub fn remove(&self) -> Result<(), TierError> {
        match std::fs::remove_file(&self.path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io("remove", &self.path)(e)),
            _ => Ok(()),
        }
    }
}

/// Brings every configured tier up; what is already up is left as it is.
pub fn up(
    cfg: &TiersConfig,
    store: &StateFile,
    progress: &mut dyn FnMut(&str),
) -> Result<TierState, TierError> {
    let before = store.load()?;
    let mut state = before.clone();
    match bring_up(cfg, &mut state, store, progress) {
        Ok(()) => Ok(state),
        Err(e) => {
            // Never leave half of the config applied: undo what this call made.
            let mut new = made_since(&before, &state);
            progress("undoing what this run made");
            if let Err(undo) = teardown(&mut new, &mut |_| Ok(()), progress) {
                progress(&format!("could not undo everything: {undo}"));
                return Err(e);
            }
            if before == TierState::default() {
                store.remove()?;
            } else {
                store.save(&before)?;
            }
            Err(e)
        }
    }
}

fn bring_up(
    cfg: &TiersConfig,
    state: &mut TierState,
    store: &StateFile,
    progress: &mut dyn FnMut(&str),
) -> Result<(), TierError> {
    for action in plan_up(cfg, state, &active_swaps()?) {
        match action {
            TierAction::MakeZram(z) => {
                progress(&format!(
                    "zram: {} {} at priority {}",
                    z.size, z.algorithm, z.priority
                ));
                make_zram(&z, state, store)?;
            }
            TierAction::ConfigureZswap(z) => {
                progress(&format!(
                    "zswap: {} up to {}% of RAM",
                    z.compressor, z.max_pool_percent
                ));
                configure_zswap(&z, state, store)?;
            }
            TierAction::MakeSwapFile(f) => {
                progress(&format!(
                    "swap file: {} {} at priority {}",
                    f.path.display(),
                    f.size,
                    f.priority
                ));
                make_swapfile(&f, state, store)?;
            }
            TierAction::SetPageCluster(n) => {
                progress(&format!(
                    "swap read-ahead: {} page(s) per fault (vm.page-cluster {n})",
                    1u32 << n
                ));
                set_page_cluster(n, state, store)?;
            }
            TierAction::SetLargeFolios(kib) => {
                progress(&format!(
                    "large folios: anonymous memory in folios of {kib} KiB"
                ));
                if read_sys(&Path::new(ZSWAP).join("enabled")).is_ok_and(|e| e == "Y") {
                    progress("large folios: zswap is on here, so the kernel reads them back from swap as 4 KiB pages (until the next boot)");
                }
                set_large_folios(kib, state, store)?;
            }
        }
    }
    Ok(())
}

/// Removes everything memext made and restores zswap, swap read-ahead and
/// large folios; idempotent.
pub fn down(store: &StateFile, progress: &mut dyn FnMut(&str)) -> Result<(), TierError> {
    let mut state = store.load()?;
    teardown(&mut state, &mut |s| store.save(s), progress)?;
    store.remove()
}

/// Removes every tier in `state`, newest first, calling `save` after each step
/// so that an interruption never loses track of what is still up.
fn teardown(
    state: &mut TierState,
    save: &mut dyn FnMut(&TierState) -> Result<(), TierError>,
    progress: &mut dyn FnMut(&str),
) -> Result<(), TierError> {
    let active = active_swaps()?;
    // Every message is printed once its step has succeeded; a step that fails
    // stays in the state (pushed back), so a later `down` tries it again.
    while let Some(path) = state.swapfiles.pop() {
        let undone = (|| {
            if active.iter().any(|a| a.path == path) {
                swap_off(&path)?;
            }
            match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io("remove", &path)(e)),
                _ => Ok(()),
            }
        })();
        if let Err(e) = undone {
            state.swapfiles.push(path);
            return Err(e);
        }
        save(state)?;
        progress(&format!("swap file: off and removed {}", path.display()));
    }
    if let Some(z) = state.zram.take() {
        if let Err(e) = remove_zram(&z) {
            state.zram = Some(z);
            return Err(e);
        }
        save(state)?;
        progress(&format!("zram: off and removed {}", z.device().display()));
    }
    if let Some(saved) = state.zswap.take() {
        let dir = Path::new(ZSWAP);
        let restored = write_sys(&dir.join("compressor"), &saved.compressor)
            .and_then(|()| write_sys(&dir.join("max_pool_percent"), &saved.max_pool_percent))
            .and_then(|()| write_sys(&dir.join("enabled"), &saved.enabled));
        if let Err(e) = restored {
            state.zswap = Some(saved);
            return Err(e);
        }
        save(state)?;
        progress(&format!(
            "zswap: restored enabled={} compressor={}",
            saved.enabled, saved.compressor
        ));
    }
    if let Some(saved) = state.page_cluster.take() {
        if let Err(e) = write_sys(Path::new(PAGE_CLUSTER), &saved) {
            state.page_cluster = Some(saved);
            return Err(e);
        }
        save(state)?;
        progress(&format!(
            "swap read-ahead: restored vm.page-cluster {saved}"
        ));
    }
    if let Some(saved) = state.large_folios.take() {
        if let Err(e) = write_sys(&large_folio_knob(saved.kib), &saved.enabled) {
            state.large_folios = Some(saved);
            return Err(e);
        }
        save(state)?;
        progress(&format!(
            "large folios: restored {} KiB to {}",
            saved.kib, saved.enabled
        ));
    }
    Ok(())
}

/// One line of `tiers status`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TierReport {
    pub kind: String,
    pub path: String,
    pub size_bytes: u64,
    pub used_bytes: u64,
    pub priority: Option<i32>,
    /// For zram: the bytes stored after compression.
    pub compressed_bytes: Option<u64>,
    pub made_by_memext: bool,
}

/// Every swap tier active now, the large folios memext set, and zswap if
/// enabled.
pub fn status(store: &StateFile) -> Result<Vec<TierReport>, TierError> {
    let state = store.load()?;
    let mut out = Vec::new();
    for a in active_swaps()? {
        let name = a.path.to_string_lossy().into_owned();
        let zram_index = name
            .strip_prefix("/dev/zram")
            .and_then(|i| i.parse::<u32>().ok());
        let compressed = zram_index.and_then(|i| {
            let mm = std::fs::read_to_string(format!("/sys/block/zram{i}/mm_stat")).ok()?;
            mm.split_whitespace().nth(1)?.parse().ok()
        });
        out.push(TierReport {
            kind: if zram_index.is_some() {
                "zram".into()
            } else {
                a.kind.clone()
            },
            made_by_memext: state.swapfiles.contains(&a.path)
                || state.zram.as_ref().is_some_and(|z| z.device() == a.path),
            path: name,
            size_bytes: a.size_bytes,
            used_bytes: a.used_bytes,
            priority: Some(a.priority),
            compressed_bytes: compressed,
        });
    }
    if let Some(saved) = &state.large_folios {
        let now = read_sys(&large_folio_knob(saved.kib)).unwrap_or_default();
        out.push(TierReport {
            kind: "folios".into(),
            path: format!(
                "anon {} KiB: {} (was {})",
                saved.kib,
                selected_choice(&now).unwrap_or("?"),
                saved.enabled
            ),
            size_bytes: saved.kib << 10,
            used_bytes: 0,
            priority: None,
            compressed_bytes: None,
            made_by_memext: true,
        });
    }
    let dir = Path::new(ZSWAP);
    if read_sys(&dir.join("enabled")).is_ok_and(|e| e == "Y") {
        let pool = std::fs::read_to_string("/sys/kernel/debug/zswap/pool_total_size")
            .ok()
            .and_then(|s| s.trim().parse().ok());
        out.push(TierReport {
            kind: "zswap".into(),
            path: read_sys(&dir.join("compressor")).unwrap_or_default(),
            size_bytes: 0,
            used_bytes: pool.unwrap_or(0),
            priority: None,
            compressed_bytes: pool,
            made_by_memext: state.zswap.is_some(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
