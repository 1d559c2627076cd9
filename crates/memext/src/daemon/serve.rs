//! The daemon's control socket: `memext status` connects, sends `status`, and
//! reads one JSON array of [`ContextReport`]s, the engine's typed state of each
//! context. The socket is root-only (0600); the daemon answers from the
//! reports it published at its last tick, so a client never slows the loop
//! down.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{bail, Context};
use memext_engine::model::State;
use memext_engine::{Class, ContextId};

use crate::identity::Runtime;
use crate::socket::accept_loop;

/// One context as the daemon sees it: the engine's state and the mover's
/// counts, typed (the JSON form keeps the names `memext status --json` had).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ContextReport {
    /// The container id (64 hex), the unit name, or the cgroup path.
    pub id: String,
    pub runtime: Runtime,
    pub name: Option<String>,
    pub class: Class,
    /// The engine's key: the cgroup path.
    pub cgroup: ContextId,
    pub state: State,
    pub target_bytes: u64,
    /// Charged to it (v1 `memory.usage_in_bytes`, v2 `memory.current`):
    /// what the plan counts, its resident pages and the kernel's own.
    #[serde(default)]
    pub usage_bytes: u64,
    pub resident_bytes: u64,
    pub swapped_bytes: u64,
    pub working_set_bytes: u64,
    pub last_wake_s_ago: Option<f64>,
    pub pushed_out_pages: u64,
    pub brought_back_pages: u64,
    /// Of those, pages mapped back as huge pages before a predicted wake.
    #[serde(default)]
    pub mapped_back_pages: u64,
    /// Of the pages last brought back, the share touched within the window.
    pub prefetch_accuracy: Option<f64>,
    /// memext pushed it out and has not brought it back since.
    pub out: bool,
    /// Brought back for a predicted wake and held in until it comes.
    #[serde(default)]
    pub held: bool,
    /// Woke and waits, frozen, until its working set fits (admission).
    #[serde(default)]
    pub waiting: bool,
    /// How its wake is noticed while it is idle and watched: `threshold`
    /// (v1 usage threshold), `psi` (a PSI trigger) or `poll`; None when a
    /// tick reads it anyway.
    #[serde(default)]
    pub wake_path: Option<String>,
    /// The memory limit memext last wrote (None: none yet).
    #[serde(default)]
    pub limit_bytes: Option<u64>,
    /// Where a lowering on its way down in the background is going.
    #[serde(default)]
    pub reclaiming_to: Option<u64>,
    /// Active, but no activity seen for a while: between two calls.
    #[serde(default)]
    pub quiet: bool,
    /// The room the plan gives it above what it has while it runs, learned
    /// from its own growth (`memext_engine::growth`).
    #[serde(default)]
    pub margin_bytes: u64,
    /// The room it keeps above what it holds while it rests, learned from
    /// its own growth at rest.
    #[serde(default)]
    pub rest_slack_bytes: u64,
}

pub type Reports = Arc<Mutex<Vec<ContextReport>>>;

pub struct Listener {
    path: PathBuf,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Listener {
    pub fn close(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().ok();
        }
        std::fs::remove_file(&self.path).ok();
    }
}

/// Listens on `path`. A stale socket left by a killed daemon is replaced; a
/// live one (another daemon answering) is an error.
pub fn serve(path: &Path, rows: Reports) -> anyhow::Result<Listener> {
    if path.exists() {
        if UnixStream::connect(path).is_ok() {
            bail!("another memext daemon is listening on {}", path.display());
        }
        std::fs::remove_file(path)
            .with_context(|| format!("removing the stale socket {}", path.display()))?;
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let listener =
        UnixListener::bind(path).with_context(|| format!("binding {}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    listener.set_nonblocking(true)?;
    let stop = Arc::new(AtomicBool::new(false));
    let thread = accept_loop(
        "memext-control",
        stop.clone(),
        crate::socket::listener_fd(&listener)?,
        move || listener.accept().map(|(c, _)| c),
        move |c| answer(c, &rows),
    )?;
    Ok(Listener {
        path: path.into(),
        stop,
        thread: Some(thread),
    })
}

fn answer(conn: UnixStream, rows: &Reports) -> anyhow::Result<()> {
    conn.set_nonblocking(false)?;
    conn.set_read_timeout(Some(Duration::from_secs(2)))?;
    let mut request = Vec::new();
    // A request is one short line; anything longer is not a client of ours.
    BufReader::new((&conn).take_bounded(REQUEST_MAX)).read_until(b'\n', &mut request)?;
    let rows = rows.lock().map(|r| r.clone()).unwrap_or_default();
    let mut conn = conn;
    conn.write_all(&respond(&request, &rows))?;
    Ok(())
}

/// The longest request line read from a client.
pub const REQUEST_MAX: u64 = 256;

/// The answer to one request line (any bytes a client sent): the rows as one
/// JSON line for `status`, a JSON error line for anything else.
pub fn respond(request: &[u8], rows: &[ContextReport]) -> Vec<u8> {
    let text = String::from_utf8_lossy(request);
    let mut out = match text.trim() {
        "status" => serde_json::to_vec(rows).unwrap_or_else(|_| b"[]".to_vec()),
        other => serde_json::to_vec(
            &serde_json::json!({ "error": format!("unknown request {other:?}") }),
        )
        .unwrap_or_default(),
    };
    out.push(b'\n');
    out
}

trait TakeBounded: std::io::Read + Sized {
    fn take_bounded(self, n: u64) -> std::io::Take<Self> {
        self.take(n)
    }
}
impl<R: std::io::Read> TakeBounded for R {}

/// Asks the daemon on `path` for its rows.
pub fn query(path: &Path) -> anyhow::Result<Vec<ContextReport>> {
    let mut conn = UnixStream::connect(path)
        .with_context(|| format!("connecting to the daemon at {}", path.display()))?;
    conn.set_read_timeout(Some(Duration::from_secs(5)))?;
    conn.write_all(b"status\n")?;
    let mut text = String::new();
    BufReader::new(conn).read_line(&mut text)?;
    serde_json::from_str(&text).context("the daemon's answer is not a status")
}

/// The daemon's view as a table.
pub fn render(rows: &[ContextReport]) -> String {
    use crate::units::human_bytes;
    let header = [
        "ID",
        "NAME",
        "CLASS",
        "STATE",
        "WAKE-BY",
        "TARGET",
        "RESIDENT",
        "SWAPPED",
        "WSET",
        "LAST-WAKE",
        "OUT-PAGES",
        "BACK-PAGES",
        "ACCURACY",
    ];
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                if matches!(r.runtime, Runtime::Plain | Runtime::Systemd) {
                    r.cgroup.to_string()
                } else {
                    r.id.chars().take(12).collect()
                },
                r.name.clone().unwrap_or_else(|| "-".into()),
                r.class.to_string(),
                if r.waiting {
                    "waiting".to_owned()
                } else {
                    r.state.to_string()
                },
                r.wake_path.clone().unwrap_or_else(|| "tick".into()),
                human_bytes(r.target_bytes),
                human_bytes(r.resident_bytes),
                human_bytes(r.swapped_bytes),
                human_bytes(r.working_set_bytes),
                r.last_wake_s_ago
                    .map_or("-".into(), |s| format!("{s:.0}s ago")),
                r.pushed_out_pages.to_string(),
                r.brought_back_pages.to_string(),
                r.prefetch_accuracy
                    .map_or("-".into(), |a| format!("{:.0}%", a * 100.0)),
            ]
        })
        .collect();
    let mut width: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for c in &cells {
        for (w, s) in width.iter_mut().zip(c) {
            *w = (*w).max(s.chars().count());
        }
    }
    let line = |fields: Vec<&str>| {
        let l: Vec<String> = fields
            .iter()
            .zip(&width)
            .enumerate()
            .map(|(i, (f, w))| {
                if i < 5 {
                    format!("{f:<w$}")
                } else {
                    format!("{f:>w$}")
                }
            })
            .collect();
        l.join("  ").trim_end().to_owned() + "\n"
    };
    let mut out = line(header.to_vec());
    for c in &cells {
        out += &line(c.iter().map(String::as_str).collect());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cgroup: &str) -> ContextReport {
        ContextReport {
            id: cgroup.into(),
            runtime: Runtime::Plain,
            name: None,
            class: Class::Extend,
            cgroup: cgroup.into(),
            state: State::Idle,
            target_bytes: 32 << 20,
            usage_bytes: 31 << 20,
            resident_bytes: 30 << 20,
            swapped_bytes: 500 << 20,
            working_set_bytes: 512 << 20,
            last_wake_s_ago: Some(12.0),
            pushed_out_pages: 120_000,
            brought_back_pages: 0,
            mapped_back_pages: 0,
            prefetch_accuracy: Some(0.93),
            out: true,
            held: false,
            waiting: false,
            wake_path: None,
            limit_bytes: Some(32 << 20),
            reclaiming_to: None,
            quiet: false,
            margin_bytes: 0,
            rest_slack_bytes: 0,
        }
    }

    #[test]
    fn socket_round_trip_and_a_second_daemon_is_refused() {
        let d = tempfile::tempdir().expect("tempdir");
        let path = d.path().join("memext.sock");
        let rows: Reports = Arc::new(Mutex::new(vec![row("/a/idle")]));
        let l = serve(&path, rows.clone()).expect("serve");
        let got = query(&path).expect("query");
        assert_eq!(got.len(), 1);
        assert_eq!(
            got[0],
            row("/a/idle"),
            "the typed report survives the socket"
        );
        assert_eq!(
            std::fs::metadata(&path)
                .expect("socket")
                .permissions()
                .mode()
                & 0o777,
            0o600
        );
        assert!(
            serve(&path, rows).is_err(),
            "a live socket must not be taken over"
        );
        l.close();
        assert!(!path.exists());
    }

    #[test]
    fn a_stale_socket_is_replaced() {
        let d = tempfile::tempdir().expect("tempdir");
        let path = d.path().join("memext.sock");
        drop(UnixListener::bind(&path).expect("bind")); // left behind, nobody listening
        let l = serve(&path, Reports::default()).expect("serve over a stale socket");
        assert!(query(&path).expect("query").is_empty());
        l.close();
    }

    #[test]
    fn any_request_gets_one_json_line_and_only_status_the_rows() {
        let rows = [row("/a/idle")];
        let ok = respond(b"status\n", &rows);
        let v: Vec<ContextReport> = serde_json::from_slice(&ok).expect("rows");
        assert_eq!(v, rows);
        for bad in [&b"stat"[..], b"", b"\xff\xfe\"}\n", b"status extra\n"] {
            let out = respond(bad, &rows);
            assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 1);
            let v: serde_json::Value = serde_json::from_slice(&out).expect("JSON");
            assert!(
                v["error"]
                    .as_str()
                    .is_some_and(|e| e.contains("unknown request")),
                "{v}"
            );
        }
    }

    #[test]
    fn table_shows_state_and_accuracy() {
        let mut idle = row("/a/idle");
        idle.wake_path = Some("threshold".into());
        let t = render(&[idle, row("/a/active")]);
        assert!(t.lines().nth(1).expect("row").contains("idle"));
        // How each context's wake is noticed: a kernel event, or the tick.
        assert!(t.lines().next().expect("header").contains("WAKE-BY"));
        assert!(t.lines().nth(1).expect("row").contains("threshold"));
        assert!(t.lines().nth(2).expect("row").contains("tick"));
        assert!(t.contains("93%"));
        assert!(t.contains("12s ago"));
        let mut w = row("/a/woke");
        (w.state, w.waiting) = (State::Waking, true);
        assert!(render(&[w])
            .lines()
            .nth(1)
            .expect("row")
            .contains("waiting"));
    }
}
