//! `memext tiers up|status|down`: the memory tiers.

use anyhow::{bail, Context as _};
use memext_cgroup::Hierarchy;

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
            let state = store.load()?;
            if !state.swapfiles.is_empty() || state.zram.is_some() {
                refuse_if_pages_cannot_come_back(&g, &cfg)?;
            }
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
    if let Some(n) = t.page_cluster {
        parts.push(format!("swap read-ahead {} page(s)", 1u32 << n));
    }
    if let Some(size) = t.large_folios {
        parts.push(format!("anonymous large folios of {size}"));
    }
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

/// Refuses, before anything is touched, when some cgroup has pages in swap
/// that its limit does not let back: `swapoff` would fail half-way.
fn refuse_if_pages_cannot_come_back(g: &Global, cfg: &config::Config) -> anyhow::Result<()> {
    let root = g
        .cgroup_root
        .clone()
        .unwrap_or_else(|| cfg.host.cgroup_root.clone());
    let h = Hierarchy::probe(&root)?;
    let blockers = tiers::guard::blockers(&h, &cfg.host.leave_alone)?;
    if blockers.is_empty() {
        return Ok(());
    }
    let lines: Vec<String> = blockers
        .iter()
        .map(|b| {
            format!(
                "  {}: {} in swap, {} in use, limit {}",
                b.cgroup,
                units::human_bytes(b.swapped),
                units::human_bytes(b.usage),
                units::human_bytes(b.limit)
            )
        })
        .collect();
    bail!(
        "not removing the swap tiers: these cgroups have pages in swap that their memory limit does not let back into DRAM, so swapoff would fail half-way (nothing was changed):\n{}\nIf a memext daemon was stopped or killed, run `memext restore` (it puts back the limits it left); otherwise raise these limits. Then run `memext tiers down` again.",
        lines.join("\n")
    )
}
