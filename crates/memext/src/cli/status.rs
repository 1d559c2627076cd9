//! `memext status`: the memory contexts, from a running daemon (its engine's
//! state) or measured here over an interval.

use std::time::Duration;

use anyhow::bail;
use memext_cgroup::{CgroupPath, Hierarchy};

use super::{load_config, Global};
use crate::{contexts, daemon, status};

pub struct Args {
    pub json: bool,
    pub all: bool,
    pub local: bool,
    pub cgroup: Option<String>,
    pub interval: Duration,
}

pub fn run(g: Global, a: Args) -> anyhow::Result<()> {
    let Args {
        json,
        all,
        local,
        cgroup,
        interval,
    } = a;
    let cfg = load_config(g.config.as_deref())?;
    // A running daemon knows more (state, targets, working sets): ask it.
    if !local && cgroup.is_none() && !all && cfg.daemon.socket.exists() {
        if let Ok(rows) = daemon::serve::query(&cfg.daemon.socket) {
            if json {
                println!("{}", serde_json::to_string_pretty(&rows)?);
            } else {
                print!("{}", daemon::serve::render(&rows));
            }
            return Ok(());
        }
    }
    let root = g
        .cgroup_root
        .unwrap_or_else(|| cfg.host.cgroup_root.clone());
    if !root.is_dir() {
        bail!("cgroup root {} does not exist", root.display());
    }
    let h = Hierarchy::probe(&root)?;
    let below = match cgroup {
        Some(p) => {
            let p = CgroupPath::parse(&p)?;
            if !p.under(&h.memory_root).is_dir() {
                bail!(
                    "cgroup {p} does not exist under {}",
                    h.memory_root.display()
                );
            }
            Some(p)
        }
        None => None,
    };
    let mut ctxs = contexts::discover(&h, &cfg, contexts::DiscoverOptions { all })?;
    ctxs.retain(|c| below.as_ref().is_none_or(|b| c.path.starts_with(b)));
    let rows = status::collect(&h, &ctxs, interval)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else if rows.is_empty() {
        println!("no memory contexts under {} (cgroup {}); see --all and the [[select]] section of the config", root.display(), h.version);
    } else {
        print!("{}", status::render_table(&rows));
    }
    Ok(())
}
