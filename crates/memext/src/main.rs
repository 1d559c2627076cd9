//! The `memext` command: memory contexts, tiers and (later) the daemon.
#![forbid(unsafe_code)]

mod config;
mod contexts;
mod control;
mod daemon;
mod identity;
mod ledger;
mod metrics;
mod mover;
mod pmem;
mod status;
mod tiers;
mod units;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context as _};
use clap::{Parser, Subcommand};
use memext_cgroup::{CgroupPath, Hierarchy};

use crate::config::Config;

/// Dynamic memory extension for containers: push idle containers out to
/// slower tiers, bring them back when they wake, protect the critical ones.
#[derive(Parser, Debug)]
#[command(name = "memext", version, about, long_about = None)]
struct Cli {
    /// Policy file (TOML). Without this flag, /etc/memext/memext.toml is used
    /// if it exists, else an empty policy (nothing selected).
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,

    /// Root of the cgroup file system (overrides host.cgroup_root).
    #[arg(long, global = true, value_name = "DIR")]
    cgroup_root: Option<PathBuf>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Show every memory context (container, selected unit or cgroup) with its
    /// class, processes, resident and swapped memory, major faults/s, CPU % and
    /// memory pressure, measured over --interval.
    Status {
        /// Print JSON (one array of objects, sizes in bytes) instead of a table.
        #[arg(long)]
        json: bool,
        /// Also list systemd units and plain cgroups that no selector names.
        #[arg(long)]
        all: bool,
        /// Measure here even if a daemon is running (default: ask the daemon).
        #[arg(long)]
        local: bool,
        /// Only contexts at or below this cgroup path (e.g. /docker).
        #[arg(long, value_name = "PATH")]
        cgroup: Option<String>,
        /// How long to measure rates over, e.g. 500ms, 2s.
        #[arg(long, default_value = "1s", value_parser = humantime::parse_duration)]
        interval: Duration,
    },
    /// Run the engine: push idle contexts out to the slower tiers, bring them
    /// back when they wake (or just before), protect the critical ones.
    /// SIGTERM or SIGINT stop it and restore every knob it changed.
    Daemon {
        /// Print the actions it would take (as they change) and change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Stop after this many ticks (default: run until a signal).
        #[arg(long, value_name = "N")]
        ticks: Option<u64>,
        /// Serve Prometheus metrics on this address (e.g. 127.0.0.1:9187); off by default.
        #[arg(long, value_name = "ADDR")]
        metrics_addr: Option<std::net::SocketAddr>,
    },
    /// Validate a policy file: report the first problem with its line, change nothing.
    CheckConfig {
        /// The file to check (default: --config, else /etc/memext/memext.toml).
        file: Option<PathBuf>,
    },
    /// Set up, report or remove the memory tiers (zram or zswap, swap files).
    Tiers {
        #[command(subcommand)]
        action: TiersAction,
    },
    /// Serve persistent-memory regions to containers (libscm) on a Unix socket:
    /// each caller gets only its own container's region files, identified by the
    /// kernel, never by what it sends. Settings come from [pmem] in the config.
    PmemBroker {
        /// Directory of region files (overrides pmem.root).
        #[arg(long, value_name = "DIR")]
        root: Option<PathBuf>,
        /// The socket (overrides pmem.socket). Mount its directory into containers.
        #[arg(long, value_name = "PATH")]
        socket: Option<PathBuf>,
        /// Also serve processes outside containers (overrides pmem.allow_host).
        #[arg(long)]
        allow_host: bool,
    },
    /// Copy a container's persistent regions to or from a file (a tar archive).
    Pmem {
        #[command(subcommand)]
        action: PmemAction,
    },
}

#[derive(Subcommand, Debug)]
enum PmemAction {
    /// Write every region of CONTAINER (id, unique id prefix, or name) to FILE.
    Export { container: String, file: PathBuf },
    /// Recreate the regions archived in FILE for CONTAINER; never overwrites one.
    Import { container: String, file: PathBuf },
}

#[derive(Subcommand, Debug)]
enum TiersAction {
    /// Create the tiers of the config's [tiers] section; what is up stays up.
    Up,
    /// Show the active swap tiers and zswap, marking what memext made.
    Status {
        #[arg(long)]
        json: bool,
    },
    /// Remove exactly what `tiers up` made and restore zswap's settings.
    Down,
}

fn load_config(flag: Option<&Path>) -> anyhow::Result<Config> {
    match flag {
        Some(p) => Ok(Config::load(p)?),
        None => {
            let p = Path::new(config::DEFAULT_PATH);
            if p.exists() {
                Ok(Config::load(p)?)
            } else {
                Ok(Config::empty(p))
            }
        }
    }
}

fn require_root(what: &str) -> anyhow::Result<()> {
    if !rustix::process::geteuid().is_root() {
        bail!("{what} needs root (it changes swap devices and kernel settings); run it with sudo");
    }
    Ok(())
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::CheckConfig { file } => {
            let path = file
                .or(cli.config)
                .unwrap_or_else(|| PathBuf::from(config::DEFAULT_PATH));
            let c = Config::load(&path)?;
            println!("{}: ok", path.display());
            for (i, s) in c.selectors.iter().enumerate() {
                println!("  select {}: {}", i + 1, s.describe());
            }
            for class in [config::Class::Critical, config::Class::Extend] {
                if let Some(p) = c.params(class) {
                    println!(
                        "  class {class}: idle_after={} floor={} headroom={}% pageout={}/s prefetch={}/s map_back={}",
                        humantime::format_duration(p.idle_after),
                        p.floor,
                        p.headroom.0,
                        p.pageout_bandwidth,
                        p.prefetch_bandwidth,
                        if p.map_back { "on" } else { "off" }
                    );
                }
            }
            println!("  tiers: {}", describe_tiers(&c.tiers));
            Ok(())
        }
        Command::Status {
            json,
            all,
            local,
            cgroup,
            interval,
        } => {
            let cfg = load_config(cli.config.as_deref())?;
            // A running daemon knows more (state, targets, working sets): ask it.
            if !local && cgroup.is_none() && !all && cfg.daemon.socket.exists() {
                if let Ok(rows) = control::query(&cfg.daemon.socket) {
                    if json {
                        println!("{}", serde_json::to_string_pretty(&rows)?);
                    } else {
                        print!("{}", control::render(&rows));
                    }
                    return Ok(());
                }
            }
            let root = cli
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
        Command::Daemon {
            dry_run,
            ticks,
            metrics_addr,
        } => {
            if !dry_run {
                require_root("memext daemon")?;
            }
            let cfg = load_config(cli.config.as_deref())?;
            let root = cli
                .cgroup_root
                .unwrap_or_else(|| cfg.host.cgroup_root.clone());
            let h = Hierarchy::probe(&root)?;
            let stop = daemon::stop_on_signals()?;
            daemon::Daemon::new(
                cfg,
                h,
                daemon::Options {
                    dry_run,
                    metrics_addr,
                    ticks,
                },
            )?
            .run(&stop)
        }
        Command::PmemBroker {
            root,
            socket,
            allow_host,
        } => {
            require_root("memext pmem-broker")?;
            let mut cfg = load_config(cli.config.as_deref())?;
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
        Command::Pmem { action } => {
            require_root("memext pmem")?;
            let cfg = load_config(cli.config.as_deref())?;
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
        Command::Tiers { action } => {
            let cfg = load_config(cli.config.as_deref())?;
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
    }
}

fn describe_tiers(t: &config::TiersConfig) -> String {
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("MEMEXT_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("memext: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
