//! `memext check-config`: validate a policy file and say what it selects.

use std::path::PathBuf;

use crate::config::{self, Config};

use super::tiers::describe_tiers;

pub fn run(file: Option<PathBuf>, config_flag: Option<PathBuf>) -> anyhow::Result<()> {
    let path = file
        .or(config_flag)
        .unwrap_or_else(|| PathBuf::from(config::DEFAULT_PATH));
    let c = Config::load(&path)?;
    println!("{}: ok", path.display());
    for (i, s) in c.selectors.iter().enumerate() {
        println!("  select {}: {}", i + 1, s.describe());
    }
    for class in [config::Class::Critical, config::Class::Extend] {
        if let Some(p) = c.params(class) {
            println!(
                "  class {class}: idle_after={} floor={} headroom={}% pageout={}/s prefetch={}/s map_back={} cpu_weight={} wake_cpu_weight={}{}",
                humantime::format_duration(p.idle_after),
                p.floor,
                p.headroom.0,
                p.pageout_bandwidth,
                p.prefetch_bandwidth,
                if p.map_back { "on" } else { "off" },
                p.cpu_weight
                    .map_or_else(|| "as set".to_owned(), |w| w.0.to_string()),
                p.wake_cpu_weight.0,
                if p.keep_anon { " keep_anon=on" } else { "" }
            );
        }
    }
    println!("  tiers: {}", describe_tiers(&c.tiers));
    Ok(())
}
