//! `memext tiers up|status|down`: the memory tiers.

use anyhow::{bail, Context as _};

use super::{load_config, require_root, Global, TiersAction};
use crate::{config, tiers, units};

pub fn run(g: Global, action: TiersAction) -> anyhow::Result<()> {
    let cfg = load_config(g.config.as_deref())?;
    let store = tiers::StateFile::new(&cfg.host.state_dir);
    let mut say = |m: &str| eprintln!("memext: {m}");
    match action {
        TiersAction::Up => {
            require_root("memext tiers up")?;
            if cfg.tiers == config::TiersConfig::default() {
                bail!(
                    "{} has no [tiers] section: nothing to set up",
                    cfg.source.display()
                );
            }
            tiers::up(&cfg.tiers, &store, &mut say).context("setting up tiers")?;
            print_tiers(&tiers::status(&store)?, false)
        }
        TiersAction::Status { json } => print_tiers(&tiers::status(&store)?, json),
        TiersAction::Down => {
            require_root("memext tiers down")?;
            tiers::down(&store, &mut say).context("removing tiers")?;
            Ok(())
        }
    }
}

pub fn describe_tiers(t: &config::TiersConfig) -> String {
    let mut parts = Vec::new();
    if let Some(z) = &t.zram {
        parts.push(match z.mem_limit {
            Some(l) => format!("zram {} {} (pool at most {l})", z.size, z.algorithm),
            None => format!("zram {} {}", z.size, z.algorithm),
        });
    }
    if let Some(z) = &t.zswap {
        parts.push(format!("zswap {}", z.compressor));
    }
    parts.extend(
        t.swapfile
            .iter()
            .map(|f| format!("swap file {} {}", f.path.display(), f.size)),
    );
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
    }
}

fn print_tiers(reports: &[tiers::TierReport], json: bool) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(reports)?);
        return Ok(());
    }
    println!(
        "{:<6} {:<32} {:>9} {:>9} {:>10} {:>5}  MEMEXT",
        "KIND", "DEVICE", "SIZE", "USED", "COMPRESSED", "PRIO"
    );
    for r in reports {
        println!(
            "{:<6} {:<32} {:>9} {:>9} {:>10} {:>5}  {}",
            r.kind,
            r.path,
            units::human_bytes(r.size_bytes),
            units::human_bytes(r.used_bytes),
            r.compressed_bytes.map_or("-".into(), units::human_bytes),
            r.priority.map_or("-".into(), |p| p.to_string()),
            if r.made_by_memext { "yes" } else { "no" }
        );
    }
    Ok(())
}
