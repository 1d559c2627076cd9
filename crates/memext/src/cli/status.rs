//! `memext status`: the memory contexts, from a running daemon (its engine's
//! state) or measured here over an interval.

use std::io::{IsTerminal, Write};
use std::time::{Duration, SystemTime};

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
    pub watch: Option<Duration>,
}

/// The shortest refresh `--watch` takes: each refresh walks the cgroup tree
/// (or asks the daemon), and a live view has no use for more than ten a second.
const WATCH_MIN: Duration = Duration::from_millis(100);

pub fn run(g: Global, a: Args) -> anyhow::Result<()> {
    let Some(every) = a.watch else {
        print!("{}", once(&g, &a)?);
        return Ok(());
    };
    if every < WATCH_MIN {
        bail!(
            "--watch {}: the shortest refresh is {} (give e.g. --watch 1s)",
            humantime::format_duration(every),
            humantime::format_duration(WATCH_MIN)
        );
    }
    let tty = std::io::stdout().is_terminal();
    loop {
        let body = once(&g, &a)?;
        let now = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
        let mut out = std::io::stdout().lock();
        let written = out
            .write_all(watch_frame(&now, every, &body, tty).as_bytes())
            .and_then(|()| out.flush());
        match written {
            // The reader went away (`| head`): the watch is over.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
            other => other?,
        }
        drop(out);
        std::thread::sleep(every);
    }
}

/// One refresh of `--watch`: on a terminal the screen is cleared and the
/// table drawn from its top; otherwise the refreshes follow one another,
/// each after a line with its time (a log, or a pipe, keeps them all).
fn watch_frame(now: &str, every: Duration, body: &str, tty: bool) -> String {
    let every = humantime::format_duration(every);
    if tty {
        format!("\x1b[H\x1b[2Jmemext status, every {every} (Ctrl-C to stop)   {now}\n\n{body}")
    } else {
        format!("--- {now}\n{body}")
    }
}

/// The status once, as text (a table, or JSON with --json).
fn once(g: &Global, a: &Args) -> anyhow::Result<String> {
    let Args {
        json,
        all,
        local,
        ref cgroup,
        interval,
        watch: _,
    } = *a;
    let cfg = load_config(g.config.as_deref())?;
    // A running daemon knows more (state, targets, working sets): ask it.
    if !local && cgroup.is_none() && !all && cfg.daemon.socket.exists() {
        if let Ok(rows) = daemon::serve::query(&cfg.daemon.socket) {
            return Ok(if json {
                format!("{}\n", serde_json::to_string_pretty(&rows)?)
            } else {
                daemon::serve::render(&rows)
            });
        }
    }
    let root = g
        .cgroup_root
        .clone()
        .unwrap_or_else(|| cfg.host.cgroup_root.clone());
    if !root.is_dir() {
        bail!("cgroup root {} does not exist", root.display());
    }
    let h = Hierarchy::probe(&root)?;
    let below = match cgroup {
        Some(p) => {
            let p = CgroupPath::parse(p)?;
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
    Ok(if json {
        format!("{}\n", serde_json::to_string_pretty(&rows)?)
    } else if rows.is_empty() {
        format!("no memory contexts under {} (cgroup {}); see --all and the [[select]] section of the config\n", root.display(), h.version)
    } else {
        status::render_table(&rows)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_watch_frame_redraws_a_terminal_and_appends_to_a_pipe() {
        let every = Duration::from_secs(2);
        let tty = watch_frame("2026-11-24T10:00:00Z", every, "TABLE\n", true);
        assert!(tty.starts_with("\x1b[H\x1b[2J"), "{tty:?}");
        assert!(tty.contains("every 2s") && tty.ends_with("TABLE\n"));
        let pipe = watch_frame("2026-11-24T10:00:00Z", every, "TABLE\n", false);
        assert_eq!(pipe, "--- 2026-11-24T10:00:00Z\nTABLE\n");
        assert!(!pipe.contains('\x1b'));
    }
}
