//! The system side of `memext tiers`: sysfs writes for zram and zswap, swap
//! files (made with O_NOFOLLOW, mkswap, swapon) and their removal.

use std::path::{Path, PathBuf};

use memext_sys::swap::{active_swaps, swap_off, swap_on};

use super::*;
use crate::config::{SwapFileConfig, ZramConfig, ZswapConfig};

pub(super) const ZRAM_CONTROL: &str = "/sys/class/zram-control";
pub(super) const ZSWAP: &str = "/sys/module/zswap/parameters";
pub(super) const PAGE_CLUSTER: &str = "/proc/sys/vm/page-cluster";
pub(super) const THP: &str = "/sys/kernel/mm/transparent_hugepage";

/// The `enabled` file of the anonymous large folios of `kib` KiB.
pub(super) fn large_folio_knob(kib: u64) -> PathBuf {
    Path::new(THP).join(format!("hugepages-{kib}kB/enabled"))
}

pub(super) fn write_sys(path: &Path, value: &str) -> Result<(), TierError> {
    std::fs::write(path, value).map_err(io("write", path))
}

pub(super) fn read_sys(path: &Path) -> Result<String, TierError> {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_owned())
        .map_err(io("read", path))
}

pub(super) fn mkswap(path: &Path) -> Result<(), TierError> {
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

pub(super) fn make_zram(
    z: &ZramConfig,
    state: &mut TierState,
    store: &StateFile,
) -> Result<(), TierError> {
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

pub(super) fn remove_zram(z: &ZramMade) -> Result<(), TierError> {
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

pub(super) fn configure_zswap(
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

/// Sets `vm.page-cluster`, the host's value saved first (once: a second
/// `up` keeps the value from before the first).
pub(super) fn set_page_cluster(
    n: u8,
    state: &mut TierState,
    store: &StateFile,
) -> Result<(), TierError> {
    let knob = Path::new(PAGE_CLUSTER);
    if state.page_cluster.is_none() {
        state.page_cluster = Some(read_sys(knob)?);
        store.save(state)?;
    }
    write_sys(knob, &n.to_string())
}

/// Sets the anonymous large folios of `kib` KiB to `always`, the host's
/// setting saved first (once: a second `up` keeps the value from before the
/// first). A size saved by an earlier `up` of another config is restored first.
pub(super) fn set_large_folios(
    kib: u64,
    state: &mut TierState,
    store: &StateFile,
) -> Result<(), TierError> {
    if let Some(old) = state.large_folios.clone().filter(|s| s.kib != kib) {
        write_sys(&large_folio_knob(old.kib), &old.enabled)?;
        state.large_folios = None;
        store.save(state)?;
    }
    let knob = large_folio_knob(kib);
    if !knob.exists() {
        let names: Vec<String> = std::fs::read_dir(THP)
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        let sizes = large_folio_sizes(names.iter().map(String::as_str));
        return Err(TierError::LargeFolioSize {
            kib,
            available: if sizes.is_empty() {
                "none".into()
            } else {
                sizes
                    .iter()
                    .map(|k| format!("{k} KiB"))
                    .collect::<Vec<_>>()
                    .join(", ")
            },
        });
    }
    if state.large_folios.is_none() {
        let text = read_sys(&knob)?;
        let enabled = selected_choice(&text)
            .ok_or_else(|| io("parse", &knob)(std::io::Error::other("no [choice] selected")))?;
        state.large_folios = Some(LargeFoliosSaved {
            kib,
            enabled: enabled.to_owned(),
        });
        store.save(state)?;
    }
    write_sys(&knob, "always")
}

pub(super) fn make_swapfile(
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

pub(super) fn libc_o_nofollow() -> i32 {
    rustix::fs::OFlags::NOFOLLOW.bits() as i32
}
