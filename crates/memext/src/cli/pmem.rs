//! `memext pmem-broker` and `memext pmem export|import`: persistent memory
//! for containers.

use std::path::PathBuf;
use std::time::Duration;

use super::{load_config, require_root, Global, PmemAction};
use crate::{daemon, pmem, units};

pub fn broker(
    g: Global,
    root: Option<PathBuf>,
    socket: Option<PathBuf>,
    allow_host: bool,
) -> anyhow::Result<()> {
    require_root("memext pmem-broker")?;
    let mut cfg = load_config(g.config.as_deref())?;
    if let Some(r) = root {
        cfg.pmem.root = r;
    }
    if let Some(s) = socket {
        cfg.pmem.socket = s;
    }
    cfg.pmem.allow_host |= allow_host;
    let stop = daemon::stop_on_signals()?;
    let broker = std::sync::Arc::new(pmem::broker::Broker::new(&cfg.pmem, &cfg.runtimes)?);
    let thread = pmem::broker::serve(broker, cfg.pmem.socket.clone(), stop.clone())?;
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = thread.join();
    let _ = std::fs::remove_file(&cfg.pmem.socket);
    tracing::info!("pmem broker: stopped");
    Ok(())
}

pub fn archive(g: Global, action: PmemAction) -> anyhow::Result<()> {
    require_root("memext pmem")?;
    let cfg = load_config(g.config.as_deref())?;
    let broker = pmem::broker::Broker::new(&cfg.pmem, &cfg.runtimes)?;
    let (container, file, export) = match action {
        PmemAction::Export { container, file } => (container, file, true),
        PmemAction::Import { container, file } => (container, file, false),
    };
    let id = pmem::resolve_container(&cfg.runtimes, &container)?;
    let key = broker
        .key_of_container(&id)
        .map_err(|why| anyhow::anyhow!("container {container}: {why}"))?;
    let (n, bytes) = if export {
        pmem::archive::export(broker.store(), &key, &file)?
    } else {
        pmem::archive::import(broker.store(), &key, &file)?
    };
    let verb = if export {
        "exported to"
    } else {
        "imported from"
    };
    println!(
        "{n} region(s), {} {verb} {}",
        units::human_bytes(bytes),
        file.display()
    );
    Ok(())
}
