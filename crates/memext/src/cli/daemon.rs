//! `memext daemon`: run the engine.

use memext_cgroup::Hierarchy;

use super::{load_config, require_root, Global};
use crate::daemon;

pub fn run(
    g: Global,
    dry_run: bool,
    ticks: Option<u64>,
    metrics_addr: Option<std::net::SocketAddr>,
) -> anyhow::Result<()> {
    if !dry_run {
        require_root("memext daemon")?;
    }
    let cfg = load_config(g.config.as_deref())?;
    let root = g
        .cgroup_root
        .unwrap_or_else(|| cfg.host.cgroup_root.clone());
    let h = Hierarchy::probe(&root)?;
    let stop = daemon::stop_on_signals()?;
    let host = daemon::observe::Host::new(&cfg, h);
    daemon::Daemon::new(
        cfg,
        host,
        daemon::Options {
            dry_run,
            metrics_addr,
            ticks,
        },
    )?
    .run(&stop)
}
