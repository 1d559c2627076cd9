//! `memext tiers up|status|down`: the slower memory tiers behind DRAM —
//! compressed RAM (a zram device or zswap) and swap files on flash — set up
//! from the config, idempotently. memext records what it made in a state file
//! and `down` removes exactly that and restores the zswap settings it changed;
//! swap areas and settings it did not make are never touched.

use std::path::{Path, PathBuf};

use memext_sys::swap::{active_swaps, swap_off, swap_on, SwapArea, SwapError};

use crate::config::{SwapFileConfig, TiersConfig, ZramConfig, ZswapConfig};

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
}

/// Pure: what `up` still has to do, given what memext already made and what
/// swap is active now.
pub fn plan_up(cfg: &TiersConfig, state: &TierState, active: &[SwapArea]) -> Vec<TierAction> {
    let is_active = |p: &Path| active.iter().any(|a| a.path == p);
    let mut plan = Vec::new();
    if let Some(z) = &cfg.zram {
        let ours_up = state.zram.as_ref().is_some_and(|m| is_active(&m.device()));
        if !ours_up {
            plan.push(TierAction::MakeZram(z.clone()));
        }
    }
    if let Some(z) = &cfg.zswap {
        plan.push(TierAction::ConfigureZswap(z.clone()));
    }
    for f in &cfg.swapfile {
        if !is_active(&f.path) {
            plan.push(TierAction::MakeSwapFile(f.clone()));
        }
    }
    plan
}

/// Pure: whether the swap area the kernel writes to next (the highest priority
/// with room left) is a zram device, whose reads are synchronous: a fault on it
/// decompresses in the faulting thread, with no I/O to wait for.
pub fn next_area_is_zram(active: &[SwapArea]) -> bool {
    active
        .iter()
        .filter(|a| a.used_bytes < a.size_bytes)
        .max_by_key(|a| a.priority)
        .filter(|a| a.kind == "partition")
        .and_then(|a| a.path.file_name())
        .is_some_and(|n| n.to_string_lossy().starts_with("zram"))
}

/// Pure: the algorithms a zram `comp_algorithm` file lists (`[lzo-rle] lzo lz4`).
pub fn parse_algorithms(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| w.trim_matches(|c| c == '[' || c == ']').to_owned())
        .collect()
}

/// Pure: the names of compression algorithms in /proc/crypto.
pub fn crypto_compressors(proc_crypto: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut name = None;
    for line in proc_crypto.lines() {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        match k.trim() {
            "name" => name = Some(v.trim().to_owned()),
            "type" if matches!(v.trim(), "compression" | "scomp" | "acomp") => {
                if let Some(n) = name.take() {
                    if !out.contains(&n) {
                        out.push(n);
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// File systems that cannot hold a swap file, by statfs magic.
pub fn unsuitable_fs(magic: i64) -> Option<&'static str> {
    match magic {
        0x0102_1994 => Some("tmpfs"),
        0x794c_7630 => Some("overlayfs"),
        0x8584_58f6 => Some("ramfs"),
        0x6969 => Some("nfs"),
        0x6573_5546 => Some("fuse"),
        0x9fa0 => Some("procfs"),
        0x6265_6572 => Some("sysfs"),
        _ => None,
    }
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

const ZRAM_CONTROL: &str = "/sys/class/zram-control";
const ZSWAP: &str = "/sys/module/zswap/parameters";

fn write_sys(path: &Path, value: &str) -> Result<(), TierError> {
    std::fs::write(path, value).map_err(io("write", path))
}

fn read_sys(path: &Path) -> Result<String, TierError> {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_owned())
        .map_err(io("read", path))
}

fn mkswap(path: &Path) -> Result<(), TierError> {
    let out = std::process::Command::new("mkswap")
        .arg(path)
        .output()
        .map_err(io("run mkswap on", path))?;
    if !out.status.success() {
        return Err(TierError::Mkswap {
            path: path.into(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().into(),
        });
    }
    Ok(())
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
        }
    }
    Ok(())
}

fn make_zram(z: &ZramConfig, state: &mut TierState, store: &StateFile) -> Result<(), TierError> {
    let control = Path::new(ZRAM_CONTROL);
    if !control.exists() {
        return Err(TierError::Missing {
            what: "zram (no /sys/class/zram-control)",
        });
    }
    // A device of ours from an earlier run that is no longer active: start over.
    if let Some(old) = state.zram.take() {
        remove_zram(&old)?;
        store.save(state)?;
    }
    let hot_add = control.join("hot_add");
    let index: u32 = read_sys(&hot_add)?
        .parse()
        .map_err(|_| io("parse", &hot_add)(std::io::Error::other("not a device number")))?;
    state.zram = Some(ZramMade {
        index,
        priority: z.priority,
    });
    store.save(state)?;
    let result = (|| {
        let block = PathBuf::from(format!("/sys/block/zram{index}"));
        let available = parse_algorithms(&read_sys(&block.join("comp_algorithm"))?);
        if !available.contains(&z.algorithm) {
            return Err(TierError::ZramAlgorithm {
                algorithm: z.algorithm.clone(),
                available: available.join(" "),
            });
        }
        write_sys(&block.join("comp_algorithm"), &z.algorithm)?;
        write_sys(&block.join("disksize"), &z.size.0.to_string())?;
        if let Some(limit) = z.mem_limit {
            write_sys(&block.join("mem_limit"), &limit.0.to_string())?;
        }
        let dev = PathBuf::from(format!("/dev/zram{index}"));
        mkswap(&dev)?;
        swap_on(&dev, z.priority)?;
        Ok(())
    })();
    if let Err(e) = result {
        if let Some(made) = state.zram.take() {
            remove_zram(&made).ok();
        }
        store.save(state)?;
        return Err(e);
    }
    Ok(())
}

fn remove_zram(z: &ZramMade) -> Result<(), TierError> {
    let dev = z.device();
    if active_swaps()?.iter().any(|a| a.path == dev) {
        swap_off(&dev)?;
    }
    let block = PathBuf::from(format!("/sys/block/zram{}", z.index));
    if block.exists() {
        write_sys(&block.join("reset"), "1")?;
        write_sys(
            &Path::new(ZRAM_CONTROL).join("hot_remove"),
            &z.index.to_string(),
        )?;
    }
    Ok(())
}

fn configure_zswap(
    z: &ZswapConfig,
    state: &mut TierState,
    store: &StateFile,
) -> Result<(), TierError> {
    let dir = Path::new(ZSWAP);
    if !dir.exists() {
        return Err(TierError::Missing { what: "zswap" });
    }
    let known = crypto_compressors(&std::fs::read_to_string("/proc/crypto").unwrap_or_default());
    if !known.contains(&z.compressor) {
        return Err(TierError::ZswapCompressor {
            compressor: z.compressor.clone(),
            available: known.join(" "),
        });
    }
    if state.zswap.is_none() {
        state.zswap = Some(ZswapSaved {
            enabled: read_sys(&dir.join("enabled"))?,
            compressor: read_sys(&dir.join("compressor"))?,
            max_pool_percent: read_sys(&dir.join("max_pool_percent"))?,
        });
        store.save(state)?;
    }
    write_sys(&dir.join("compressor"), &z.compressor)?;
    write_sys(
        &dir.join("max_pool_percent"),
        &z.max_pool_percent.to_string(),
    )?;
    write_sys(&dir.join("enabled"), "Y")
}

fn make_swapfile(
    f: &SwapFileConfig,
    state: &mut TierState,
    store: &StateFile,
) -> Result<(), TierError> {
    let dir = f.path.parent().ok_or_else(|| TierError::Exists {
        path: f.path.clone(),
    })?;
    // Check the file system the file would land on before creating anything.
    let probe = dir
        .ancestors()
        .find(|a| a.exists())
        .unwrap_or(Path::new("/"));
    let fs = rustix::fs::statfs(probe).map_err(|e| io("statfs", probe)(e.into()))?;
    #[allow(clippy::unnecessary_cast)] // f_type's width differs between libcs
    if let Some(name) = unsuitable_fs(fs.f_type as i64) {
        return Err(TierError::BadFilesystem {
            path: f.path.clone(),
            fs: name,
        });
    }
    let ours = state.swapfiles.contains(&f.path);
    if f.path.exists() && !ours {
        return Err(TierError::Exists {
            path: f.path.clone(),
        });
    }
    let vfs = rustix::fs::statvfs(probe).map_err(|e| io("statvfs", probe)(e.into()))?;
    let held = if ours {
        std::fs::metadata(&f.path).map(|m| m.len()).unwrap_or(0)
    } else {
        0
    };
    let free = vfs.f_bavail.saturating_mul(vfs.f_frsize) + held;
    if f.size.0 > free {
        return Err(TierError::NoSpace {
            path: f.path.clone(),
            need: f.size.0,
            free,
        });
    }
    std::fs::create_dir_all(dir).map_err(io("create", dir))?;
    if !ours {
        state.swapfiles.push(f.path.clone());
        store.save(state)?;
    }
    let result = (|| {
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .custom_flags(libc_o_nofollow())
            .open(&f.path)
            .map_err(io("create", &f.path))?;
        rustix::fs::fallocate(&file, rustix::fs::FallocateFlags::empty(), 0, f.size.0)
            .map_err(|e| io("fallocate", &f.path)(e.into()))?;
        drop(file);
        mkswap(&f.path)?;
        swap_on(&f.path, f.priority)?;
        Ok(())
    })();
    if let Err(e) = result {
        std::fs::remove_file(&f.path).ok();
        state.swapfiles.retain(|p| p != &f.path);
        store.save(state)?;
        return Err(e);
    }
    Ok(())
}

fn libc_o_nofollow() -> i32 {
    rustix::fs::OFlags::NOFOLLOW.bits() as i32
}

/// Removes everything memext made and restores zswap; idempotent.
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
    while let Some(path) = state.swapfiles.pop() {
        progress(&format!("swap file: off and removed {}", path.display()));
        if active.iter().any(|a| a.path == path) {
            swap_off(&path)?;
        }
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(io("remove", &path)(e))
            }
            _ => {}
        }
        save(state)?;
    }
    if let Some(z) = state.zram.take() {
        progress(&format!("zram: off and removed {}", z.device().display()));
        remove_zram(&z)?;
        save(state)?;
    }
    if let Some(saved) = state.zswap.take() {
        progress(&format!(
            "zswap: restored enabled={} compressor={}",
            saved.enabled, saved.compressor
        ));
        let dir = Path::new(ZSWAP);
        write_sys(&dir.join("compressor"), &saved.compressor)?;
        write_sys(&dir.join("max_pool_percent"), &saved.max_pool_percent)?;
        write_sys(&dir.join("enabled"), &saved.enabled)?;
        save(state)?;
    }
    Ok(())
}

/// Pure: what `after` holds that `before` did not.
pub fn made_since(before: &TierState, after: &TierState) -> TierState {
    TierState {
        zram: after
            .zram
            .clone()
            .filter(|z| before.zram.as_ref() != Some(z)),
        zswap: after.zswap.clone().filter(|_| before.zswap.is_none()),
        swapfiles: after
            .swapfiles
            .iter()
            .filter(|p| !before.swapfiles.contains(p))
            .cloned()
            .collect(),
    }
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

/// Every swap tier active now, and zswap if enabled.
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
mod tests {
    use super::*;
    use crate::units::ByteSize;

    fn area(p: &str) -> SwapArea {
        SwapArea {
            path: p.into(),
            kind: "file".into(),
            size_bytes: 1,
            used_bytes: 0,
            priority: 1,
        }
    }

    #[test]
    fn the_next_area_is_the_highest_priority_one_with_room() {
        let with = |p: &str, prio: i32, used: u64| SwapArea {
            kind: if p.starts_with("/dev/") {
                "partition"
            } else {
                "file"
            }
            .into(),
            priority: prio,
            used_bytes: used,
            size_bytes: 10,
            ..area(p)
        };
        assert!(!next_area_is_zram(&[]));
        assert!(next_area_is_zram(&[
            with("/dev/zram0", 100, 0),
            with("/var/swap0", 10, 0)
        ]));
        assert!(!next_area_is_zram(&[
            with("/dev/zram0", 100, 10),
            with("/var/swap0", 10, 0)
        ]));
        assert!(!next_area_is_zram(&[
            with("/dev/zram0", 5, 0),
            with("/var/swap0", 10, 0)
        ]));
        // A swap file that happens to be called zram-something is a file.
        assert!(!next_area_is_zram(&[with("/srv/zram.img", 1, 0)]));
    }

    fn cfg() -> TiersConfig {
        TiersConfig {
            zram: Some(ZramConfig {
                size: ByteSize(1 << 30),
                algorithm: "lz4".into(),
                priority: 100,
                mem_limit: None,
            }),
            zswap: None,
            swapfile: vec![SwapFileConfig {
                path: "/var/lib/memext/swap0".into(),
                size: ByteSize(1 << 30),
                priority: 50,
            }],
        }
    }

    #[test]
    fn plan_from_nothing_makes_everything() {
        let plan = plan_up(&cfg(), &TierState::default(), &[area("/dev/zram0")]);
        assert_eq!(plan.len(), 2);
        assert!(matches!(plan[0], TierAction::MakeZram(_)));
        assert!(matches!(plan[1], TierAction::MakeSwapFile(_)));
    }

    #[test]
    fn plan_is_idempotent_once_up() {
        let state = TierState {
            zram: Some(ZramMade {
                index: 3,
                priority: 100,
            }),
            zswap: None,
            swapfiles: vec!["/var/lib/memext/swap0".into()],
        };
        let active = [area("/dev/zram3"), area("/var/lib/memext/swap0")];
        assert!(plan_up(&cfg(), &state, &active).is_empty());
        // Someone else's zram0 does not count as ours.
        let state2 = TierState {
            zram: None,
            ..state
        };
        assert_eq!(
            plan_up(
                &cfg(),
                &state2,
                &[area("/dev/zram0"), area("/var/lib/memext/swap0")]
            )
            .len(),
            1
        );
    }

    #[test]
    fn made_since_is_what_is_new() {
        let before = TierState {
            zram: None,
            zswap: None,
            swapfiles: vec!["/a".into()],
        };
        let after = TierState {
            zram: Some(ZramMade {
                index: 4,
                priority: 1,
            }),
            zswap: Some(ZswapSaved {
                enabled: "N".into(),
                compressor: "lzo".into(),
                max_pool_percent: "20".into(),
            }),
            swapfiles: vec!["/a".into(), "/b".into()],
        };
        let new = made_since(&before, &after);
        assert_eq!(new.swapfiles, vec![PathBuf::from("/b")]);
        assert_eq!(new.zram, after.zram);
        assert!(new.zswap.is_some());
        assert_eq!(made_since(&after, &after), TierState::default());
    }

    #[test]
    fn parses_zram_algorithms() {
        assert_eq!(
            parse_algorithms("[lzo-rle] lzo lz4 zstd\n"),
            vec!["lzo-rle", "lzo", "lz4", "zstd"]
        );
    }

    #[test]
    fn finds_compressors_in_proc_crypto() {
        let text = "name         : lz4\ndriver       : lz4-scomp\ntype         : scomp\n\n\
                    name         : sha256\ntype         : shash\n\n\
                    name         : lzo\ntype         : compression\n";
        assert_eq!(crypto_compressors(text), vec!["lz4", "lzo"]);
    }

    #[test]
    fn refuses_tmpfs_and_overlay() {
        assert_eq!(unsuitable_fs(0x0102_1994), Some("tmpfs"));
        assert_eq!(unsuitable_fs(0x794c_7630), Some("overlayfs"));
        assert_eq!(unsuitable_fs(0xEF53), None); // ext4
    }

    fn swapfile_cfg(path: &Path, size: u64) -> TiersConfig {
        TiersConfig {
            swapfile: vec![SwapFileConfig {
                path: path.into(),
                size: ByteSize(size),
                priority: 5,
            }],
            ..Default::default()
        }
    }

    #[test]
    fn refuses_a_swap_file_on_tmpfs_before_making_anything() {
        let state = tempfile::tempdir().expect("tempdir");
        let target = Path::new("/dev/shm/memext-unit-never-made/swap");
        let err = up(
            &swapfile_cfg(target, 1 << 20),
            &StateFile::new(state.path()),
            &mut |_| {},
        )
        .expect_err("tmpfs");
        assert!(
            matches!(err, TierError::BadFilesystem { fs: "tmpfs", .. }),
            "{err}"
        );
        assert!(!target.parent().expect("parent").exists());
        assert!(!state.path().join("tiers.json").exists());
    }

    #[test]
    fn refuses_a_swap_file_larger_than_free_space() {
        let state = tempfile::tempdir().expect("tempdir");
        let target = state.path().join("swap");
        let err = up(
            &swapfile_cfg(&target, 1 << 60),
            &StateFile::new(state.path()),
            &mut |_| {},
        )
        .expect_err("too big");
        assert!(matches!(err, TierError::NoSpace { .. }), "{err}");
        assert!(!target.exists());
    }

    #[test]
    fn refuses_to_take_over_an_existing_file() {
        let state = tempfile::tempdir().expect("tempdir");
        let target = state.path().join("precious");
        std::fs::write(&target, "data").expect("write");
        let err = up(
            &swapfile_cfg(&target, 1 << 20),
            &StateFile::new(state.path()),
            &mut |_| {},
        )
        .expect_err("exists");
        assert!(matches!(err, TierError::Exists { .. }), "{err}");
        assert_eq!(std::fs::read_to_string(&target).expect("read"), "data");
    }

    #[test]
    fn state_round_trips_atomically() {
        let d = tempfile::tempdir().expect("tempdir");
        let store = StateFile::new(d.path());
        assert_eq!(store.load().expect("empty"), TierState::default());
        let s = TierState {
            zram: Some(ZramMade {
                index: 2,
                priority: 100,
            }),
            zswap: Some(ZswapSaved {
                enabled: "N".into(),
                compressor: "lzo".into(),
                max_pool_percent: "20".into(),
            }),
            swapfiles: vec!["/x".into()],
        };
        store.save(&s).expect("save");
        assert_eq!(store.load().expect("load"), s);
        assert!(!d.path().join("tiers.json.tmp").exists());
        std::fs::write(d.path().join("tiers.json"), "{").expect("corrupt");
        assert!(matches!(store.load(), Err(TierError::State { .. })));
    }
}
