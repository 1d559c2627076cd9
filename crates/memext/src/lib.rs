//! memext's machinery as a library: the modules of the `memext` command
//! (`main.rs` is only its entry point), open to its fuzz targets (`fuzz/`).
#![forbid(unsafe_code)]

pub mod cli;
pub mod config;
pub mod contexts;
pub mod daemon;
pub mod identity;
pub mod kube;
pub mod pmem;
pub mod socket;
pub mod status;
pub mod tiers;
pub mod units;
