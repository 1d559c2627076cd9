//! `memext restore`: put back every knob a daemon that is no longer running
//! left changed (from its ledger), without starting the engine, saying per
//! context what it did. The systemd unit runs it after the daemon stops, before
//! `tiers down`, so that a crashed daemon's limits never keep pages in swap.

use anyhow::{bail, Context as _};
use memext_cgroup::Hierarchy;

use super::{load_config, require_root, Global};
use crate::daemon::ledger::{Ledger, Restored};
use crate::daemon::serve;

pub fn run(g: Global) -> anyhow::Result<()> {
    require_root("memext restore")?;
    let cfg = load_config(g.config.as_deref())?;
    if cfg.daemon.socket.exists() && serve::query(&cfg.daemon.socket).is_ok() {
        bail!(
            "a memext daemon is running (it answers on {}); stop it instead: it restores its knobs itself on SIGTERM",
            cfg.daemon.socket.display()
        );
    }
    let root = g
        .cgroup_root
        .unwrap_or_else(|| cfg.host.cgroup_root.clone());
    let h = Hierarchy::probe(&root)?;
    remove_move_group(&h);
    let path = cfg.host.state_dir.join("daemon.json");
    let mut ledger = Ledger::load(&path)?;
    if ledger.records().is_empty() {
        println!(
            "nothing to restore: no knob of a daemon's is left in {}",
            path.display()
        );
        return Ok(());
    }
    let mut failed = 0;
    for (r, outcome) in ledger.restore_each(&h).context("restoring knobs")? {
        let what = format!("{} {}", r.cgroup, r.knob);
        match outcome {
            Restored::Done => println!("{what}: {} -> {} (restored)", r.written, r.original),
            Restored::Vanished => println!("{what}: the cgroup is gone, nothing to restore"),
            Restored::Foreign(found) => println!(
                "{what}: left at {found}: someone else changed it after memext wrote {}",
                r.written
            ),
            Restored::Failed(e) => {
                failed += 1;
                println!("{what}: NOT restored: {e}");
            }
        }
    }
    if failed > 0 {
        bail!("{failed} knob(s) could not be restored (above)");
    }
    Ok(())
}

/// Removes the cpu cgroup a killed daemon's background moves ran in (its
/// threads gone with it, it is empty).
fn remove_move_group(h: &Hierarchy) {
    let Some(dir) = h
        .cpu_root
        .as_ref()
        .map(|r| r.join(crate::daemon::priority::GROUP_NAME))
    else {
        return;
    };
    if dir.is_dir() {
        match std::fs::remove_dir(&dir) {
            Ok(()) => println!("{}: the moves' cpu cgroup, removed", dir.display()),
            Err(e) => println!("{}: the moves' cpu cgroup, NOT removed: {e}", dir.display()),
        }
    }
}
