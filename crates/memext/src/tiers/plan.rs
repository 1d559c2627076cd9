//! Pure decisions of `memext tiers`: what `up` must make, which swap area is
//! filled next, what a kernel offers (algorithms, compressors, file systems).

use std::path::Path;

use memext_sys::swap::SwapArea;

use super::*;
use crate::config::TiersConfig;

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
    if let Some(n) = cfg.page_cluster {
        plan.push(TierAction::SetPageCluster(n));
    }
    if let Some(size) = cfg.large_folios {
        plan.push(TierAction::SetLargeFolios(size.0 >> 10));
    }
    plan
}

/// Pure: the choice a sysfs multiple-choice file has selected
/// (`always inherit madvise [never]` -> `never`).
pub fn selected_choice(text: &str) -> Option<&str> {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix('[')?.strip_suffix(']'))
}

/// Pure: the large-folio sizes in KiB of `transparent_hugepage`'s
/// `hugepages-<N>kB` directory names, smallest first.
pub fn large_folio_sizes<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<u64> {
    let mut kib: Vec<u64> = names
        .into_iter()
        .filter_map(|n| {
            n.strip_prefix("hugepages-")?
                .strip_suffix("kB")?
                .parse()
                .ok()
        })
        .collect();
    kib.sort_unstable();
    kib
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
        page_cluster: after
            .page_cluster
            .clone()
            .filter(|_| before.page_cluster.is_none()),
        large_folios: after
            .large_folios
            .clone()
            .filter(|_| before.large_folios.is_none()),
    }
}
