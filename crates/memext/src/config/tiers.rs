//! The `[tiers]` section: zram, zswap, swap files; defaults and checks.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::units::ByteSize;

/// A compressed-RAM swap device.
#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ZramConfig {
    pub size: ByteSize,
    #[serde(default = "default_zram_algorithm")]
    pub algorithm: String,
    #[serde(default = "default_zram_priority")]
    pub priority: i32,
    /// Host DRAM the compressed pool may take (zram's `mem_limit`); none: unbounded.
    #[serde(default)]
    pub mem_limit: Option<ByteSize>,
}
pub(crate) fn default_zram_algorithm() -> String {
    "lz4".into()
}
pub(crate) fn default_zram_priority() -> i32 {
    100
}

/// zswap: a compressed cache in front of the swap devices.
#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ZswapConfig {
    #[serde(default = "default_zswap_compressor")]
    pub compressor: String,
    #[serde(default = "default_pool_percent")]
    pub max_pool_percent: u8,
}
/// lzo-rle is built into every kernel with zswap; lz4 often is a module.
pub(crate) fn default_zswap_compressor() -> String {
    "lzo-rle".into()
}
pub(crate) fn default_pool_percent() -> u8 {
    20
}

/// A swap file on flash.
#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct SwapFileConfig {
    pub path: PathBuf,
    pub size: ByteSize,
    #[serde(default = "default_swapfile_priority")]
    pub priority: i32,
}
pub(crate) fn default_swapfile_priority() -> i32 {
    50
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct TiersConfig {
    pub zram: Option<ZramConfig>,
    pub zswap: Option<ZswapConfig>,
    #[serde(default)]
    pub swapfile: Vec<SwapFileConfig>,
    /// `vm.page-cluster` while the tiers are up: a fault on swap reads 2^N
    /// slots around the one it needs, whoever's pages they hold, and each
    /// page read is charged to its owner's cgroup. memext reads a context
    /// back in bulk itself (MADV_WILLNEED over its ranges), so the kernel's
    /// read-ahead only charges pages to contexts that never asked for them
    /// (which fires their wake events on a disk). 0 reads one page per
    /// fault; `down` restores the host's value. Left out: the host's value
    /// is left alone.
    #[serde(default)]
    pub page_cluster: Option<u8>,
    /// Anonymous memory in large folios of this size (the kernel's mTHP,
    /// `transparent_hugepage/hugepages-<size>kB/enabled` set to `always`)
    /// while the tiers are up. A large folio is written to swap whole and,
    /// from a zram device, read back whole in one fault: a 64 MiB heap came
    /// back in 19-21 ms against 34-37 ms in 4 KiB pages (docs/faas,
    /// session 55). From a swap file it comes back in 4 KiB pages. `down`
    /// restores the host's setting. Left out: the host's setting is left alone.
    #[serde(default)]
    pub large_folios: Option<ByteSize>,
}

/// The largest `tiers.page_cluster`: 2^10 pages (4 MiB) read per fault.
pub const MAX_PAGE_CLUSTER: u8 = 10;

/// `tiers.large_folios` sizes: the kernel's smallest anonymous large folio
/// (order 2 of 4 KiB pages) up to below the 2 MiB of a PMD huge page, which
/// THP's own `enabled` governs.
pub const LARGE_FOLIO_SIZES: std::ops::RangeInclusive<u64> = (16 << 10)..=(1 << 20);

pub(crate) fn validate_tiers(t: &TiersConfig) -> Option<String> {
    let prio_ok = |p: i32| (0..=32767).contains(&p);
    if let Some(z) = &t.zram {
        if z.size.0 == 0 {
            return Some("tiers.zram.size must be more than 0".into());
        }
        if !prio_ok(z.priority) {
            return Some(format!(
                "tiers.zram.priority {} is outside 0..=32767",
                z.priority
            ));
        }
        if z.mem_limit.is_some_and(|l| l.0 == 0) {
            return Some(
                "tiers.zram.mem_limit must be more than 0 (leave it out for no limit)".into(),
            );
        }
        if t.zswap.is_some() {
            return Some("tiers.zswap in front of tiers.zram compresses every page twice; configure one of them".into());
        }
    }
    if let Some(z) = &t.zswap {
        if z.max_pool_percent == 0 || z.max_pool_percent > 100 {
            return Some(format!(
                "tiers.zswap.max_pool_percent {} is outside 1..=100",
                z.max_pool_percent
            ));
        }
    }
    if let Some(n) = t.page_cluster.filter(|&n| n > MAX_PAGE_CLUSTER) {
        return Some(format!(
            "tiers.page_cluster {n} is outside 0..={MAX_PAGE_CLUSTER} (the kernel reads 2^N pages per swap fault)"
        ));
    }
    if let Some(size) = t.large_folios {
        if !size.0.is_power_of_two() || !LARGE_FOLIO_SIZES.contains(&size.0) {
            return Some(format!(
                "tiers.large_folios {size} must be a power of two from 16KiB to 1MiB"
            ));
        }
        if t.zswap.is_some() {
            return Some("tiers.large_folios with tiers.zswap: once zswap has been enabled, the kernel (6.18 and before) reads every large folio back from swap as 4 KiB pages until the next boot; configure one of them".into());
        }
    }
    for f in &t.swapfile {
        if !f.path.is_absolute() {
            return Some(format!(
                "tiers.swapfile path {} must be absolute",
                f.path.display()
            ));
        }
        if f.size.0 < 1 << 20 {
            return Some(format!(
                "tiers.swapfile {} size {} is below the 1MiB minimum",
                f.path.display(),
                f.size
            ));
        }
        if !prio_ok(f.priority) {
            return Some(format!(
                "tiers.swapfile {} priority {} is outside 0..=32767",
                f.path.display(),
                f.priority
            ));
        }
    }
    let mut paths: Vec<&Path> = t.swapfile.iter().map(|f| f.path.as_path()).collect();
    paths.sort();
    if let Some(w) = paths.windows(2).find(|w| w[0] == w[1]) {
        return Some(format!("tiers.swapfile {} is listed twice", w[0].display()));
    }
    None
}
