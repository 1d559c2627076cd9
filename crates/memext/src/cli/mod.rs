//! The `memext` command line: the global flags and one module per
//! subcommand. Each module parses nothing itself (clap did) and calls into
//! the crate; this file only dispatches.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::bail;
use clap::{Parser, Subcommand};

use crate::config::{self, Config};

mod check_config;
mod daemon;
mod pmem;
mod restore;
mod status;
mod tiers;

/// Dynamic memory extension for containers: push idle containers out to
/// slower tiers, bring them back when they wake, protect the critical ones.
#[derive(Parser, Debug)]
#[command(name = "memext", version, about, long_about = None)]
pub struct Cli {
    /// Policy file (TOML). Without this flag, /etc/memext/memext.toml is used
    /// if it exists, else an empty policy (nothing selected).
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,

    /// Root of the cgroup file system (overrides host.cgroup_root).
    #[arg(long, global = true, value_name = "DIR")]
    cgroup_root: Option<PathBuf>,

    /// Log lines on stderr as text, or as JSON objects (one a line) whose
    /// fields (`event`, `context`, ...) tools can read. Level: MEMEXT_LOG.
    #[arg(long, global = true, value_enum, default_value = "text")]
    pub log_format: LogFormat,

    #[command(subcommand)]
    command: Command,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum LogFormat {
    Text,
    Json,
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
        /// Keep showing it, refreshed every this long (e.g. 2s), until Ctrl-C: a
        /// live view. On a terminal the screen is redrawn in place; otherwise
        /// each refresh is printed after a line with the time.
        #[arg(long, value_name = "EVERY", value_parser = humantime::parse_duration)]
        watch: Option<Duration>,
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
    /// Put back every cgroup knob a daemon that is no longer running left
    /// changed (from the ledger in the state dir), without starting the engine;
    /// says per context what it restored. Run it after a crash, before `tiers down`.
    Restore,
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
pub enum PmemAction {
    /// Write every region of CONTAINER (id, unique id prefix, or name) to FILE.
    Export { container: String, file: PathBuf },
    /// Recreate the regions archived in FILE for CONTAINER; never overwrites one.
    Import { container: String, file: PathBuf },
}

#[derive(Subcommand, Debug)]
pub enum TiersAction {
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

/// The flags every subcommand shares.
pub struct Global {
    pub config: Option<PathBuf>,
    pub cgroup_root: Option<PathBuf>,
}

pub fn load_config(flag: Option<&Path>) -> anyhow::Result<Config> {
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

pub fn require_root(what: &str) -> anyhow::Result<()> {
    if !rustix::process::geteuid().is_root() {
        bail!("{what} needs root (it changes swap devices and kernel settings); run it with sudo");
    }
    Ok(())
}

pub fn run(cli: Cli) -> anyhow::Result<()> {
    let g = Global {
        config: cli.config,
        cgroup_root: cli.cgroup_root,
    };
    let server = matches!(
        cli.command,
        Command::Daemon { .. } | Command::PmemBroker { .. }
    );
    if !server {
        // A one-shot command piped into `head` ends quietly when it closes.
        memext_sys::end_quietly_on_closed_pipe();
    }
    match cli.command {
        Command::CheckConfig { file } => check_config::run(file, g.config),
        Command::Status {
            json,
            all,
            local,
            cgroup,
            interval,
            watch,
        } => status::run(
            g,
            status::Args {
                json,
                all,
                local,
                cgroup,
                interval,
                watch,
            },
        ),
        Command::Daemon {
            dry_run,
            ticks,
            metrics_addr,
        } => daemon::run(g, dry_run, ticks, metrics_addr),
        Command::PmemBroker {
            root,
            socket,
            allow_host,
        } => pmem::broker(g, root, socket, allow_host),
        Command::Pmem { action } => pmem::archive(g, action),
        Command::Tiers { action } => tiers::run(g, action),
        Command::Restore => restore::run(g),
    }
}
