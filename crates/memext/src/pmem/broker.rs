//! The pmem broker: answers one `OPEN` request per connection with the
//! caller's own region file descriptor, or a refusal with its reason. Which
//! container is calling is decided from the connection (see `peer`); the
//! region's key from that container's identity and the configured key policy.
//! Every refusal is logged, at most a few lines per caller per minute.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::os::fd::AsFd;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use scm::client::send_reply;
use scm::protocol::{valid_name, OpenRequest, Reply, MAX_LINE};

use crate::config::{PmemConfig, RegionKey, RuntimePaths};
use crate::contexts::NameResolver;
use crate::pmem::peer::{identify_caller, Caller};
use crate::pmem::store::RegionStore;

pub struct Broker {
    store: RegionStore,
    key: RegionKey,
    allow_host: bool,
    runtimes: RuntimePaths,
    refusals: Mutex<RefusalLog>,
}

/// Refusal log lines per caller (container or host uid) per minute.
const REFUSALS_PER_MINUTE: u32 = 10;

#[derive(Default)]
struct RefusalLog {
    windows: HashMap<String, (Instant, u32)>,
}

impl RefusalLog {
    /// Whether to log this refusal; says how many were held back when a window ends.
    fn admit(&mut self, who: &str, now: Instant) -> (bool, u32) {
        let entry = self.windows.entry(who.to_owned()).or_insert((now, 0));
        if now.duration_since(entry.0) >= Duration::from_secs(60) {
            let held_back = entry.1.saturating_sub(REFUSALS_PER_MINUTE);
            *entry = (now, 1);
            return (true, held_back);
        }
        entry.1 += 1;
        (entry.1 <= REFUSALS_PER_MINUTE, 0)
    }
}

impl Broker {
    pub fn new(cfg: &PmemConfig, runtimes: &RuntimePaths) -> anyhow::Result<Self> {
        let store = RegionStore::open(&cfg.root, cfg.container_quota.0, cfg.total_quota.0)?;
        Ok(Self {
            store,
            key: cfg.key.clone(),
            allow_host: cfg.allow_host,
            runtimes: runtimes.clone(),
            refusals: Mutex::new(RefusalLog::default()),
        })
    }

    pub fn store(&self) -> &RegionStore {
        &self.store
    }

    /// The key a caller's regions are filed under, or why it gets none.
    pub fn key_of(&self, caller: &Caller) -> Result<String, String> {
        let Some(container) = &caller.container else {
            return if self.allow_host {
                Ok(format!("host-uid{}", caller.uid))
            } else {
                Err("callers outside a container are not served (pmem.allow_host)".into())
            };
        };
        self.key_of_container(&container.id)
    }

    /// The key of the container with this (64-hex) id under the key policy.
    pub fn key_of_container(&self, id: &str) -> Result<String, String> {
        let names = NameResolver::new(&self.runtimes.docker_roots, &self.runtimes.podman_roots);
        let key = match &self.key {
            RegionKey::Id => Some(id.to_owned()),
            RegionKey::Name => names.docker_name(id),
            RegionKey::Label(label) => names.docker_label(id, label),
        };
        match key {
            Some(k) if valid_name(&k) => Ok(k),
            Some(_) => Err("the container's region key is not a valid name".into()),
            None => Err("the container has no name or label to file its regions under".into()),
        }
    }

    fn refuse(&self, conn: &UnixStream, who: &str, pid: Option<u32>, reason: &str) {
        let (log, held_back) = self
            .refusals
            .lock()
            .map(|mut l| l.admit(who, Instant::now()))
            .unwrap_or((true, 0));
        if held_back > 0 {
            tracing::warn!("pmem broker: {held_back} more refusals of {who} were not logged");
        }
        if log {
            tracing::warn!("pmem broker: refused {who} (pid {pid:?}): {reason}");
        }
        let _ = send_reply(
            conn,
            &Reply::Err {
                reason: reason.to_owned(),
            },
            None,
        );
    }

    /// Answers one connection.
    pub fn handle(&self, conn: UnixStream) -> anyhow::Result<()> {
        conn.set_nonblocking(false)?;
        conn.set_read_timeout(Some(Duration::from_secs(2)))?;
        // The request is read before anything is answered, refusals too: a
        // caller refused before it has sent would meet a closed socket
        // (EPIPE) instead of the reason.
        let mut line = String::new();
        let limit = u64::try_from(MAX_LINE).unwrap_or(256) + 1;
        BufReader::new((&conn).take(limit))
            .read_line(&mut line)
            .context("reading the request")?;
        let caller = match identify_caller(&conn) {
            Ok(c) => c,
            Err(e) => {
                self.refuse(&conn, "unidentified caller", None, &e.to_string());
                return Ok(());
            }
        };
        let who = match &caller.container {
            Some(c) => format!("{} container {}", c.runtime, &c.id[..12.min(c.id.len())]),
            None => format!("host uid {}", caller.uid),
        };
        let key = match self.key_of(&caller) {
            Ok(k) => k,
            Err(reason) => {
                self.refuse(&conn, &who, Some(caller.pid), &reason);
                return Ok(());
            }
        };
        let request = match OpenRequest::parse(&line) {
            Ok(r) => r,
            Err(why) => {
                self.refuse(
                    &conn,
                    &who,
                    Some(caller.pid),
                    &format!("bad request: {why}"),
                );
                return Ok(());
            }
        };
        match self.store.open_region(&key, &request) {
            Ok((file, size)) => {
                tracing::info!(
                    "pmem broker: {who} opened region {:?} ({size} bytes)",
                    request.name
                );
                let reply = Reply::Ok {
                    size,
                    backing: self.store.backing.to_owned(),
                };
                send_reply(&conn, &reply, Some(file.as_fd())).context("sending the region")?;
            }
            Err(e) => {
                tracing::debug!("pmem broker: {who}: {e}");
                self.refuse(&conn, &who, Some(caller.pid), &e.reason());
            }
        }
        Ok(())
    }
}

/// Binds the broker's socket: its directory is made 0755, a stale socket from an
/// earlier broker is replaced (anything else at the path is refused), and the
/// socket is 0666, since containers connect as any uid and are told apart by
/// their cgroup, not their uid.
pub fn bind(socket: &Path) -> anyhow::Result<UnixListener> {
    if let Some(dir) = socket.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    match std::fs::symlink_metadata(socket) {
        Ok(m) if std::os::unix::fs::FileTypeExt::is_socket(&m.file_type()) => {
            std::fs::remove_file(socket)
                .with_context(|| format!("removing stale {}", socket.display()))?
        }
        Ok(_) => anyhow::bail!("{} exists and is not a socket", socket.display()),
        Err(_) => {}
    }
    let listener =
        UnixListener::bind(socket).with_context(|| format!("binding {}", socket.display()))?;
    std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o666))?;
    listener.set_nonblocking(true)?;
    Ok(listener)
}

/// Serves until `stop` is set; removes the socket when done.
pub fn serve(
    broker: Arc<Broker>,
    socket: PathBuf,
    stop: Arc<AtomicBool>,
) -> anyhow::Result<std::thread::JoinHandle<()>> {
    let listener = bind(&socket)?;
    tracing::info!(
        "pmem broker: serving {} on {} ({}, key {:?})",
        broker.store.root_path().display(),
        socket.display(),
        broker.store.backing,
        broker.key
    );
    let handle = crate::socket::accept_loop(
        "pmem-broker",
        stop,
        crate::socket::listener_fd(&listener)?,
        move || listener.accept().map(|(c, _)| c),
        move |conn| broker.handle(conn),
    )?;
    Ok(handle)
}

/// The broker running inside the daemon (`[pmem] in_daemon = true`).
pub struct InDaemon {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl InDaemon {
    pub fn stop(self, socket: &std::path::Path) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let _ = self.thread.join();
        let _ = std::fs::remove_file(socket);
    }
}

/// Starts the broker beside the daemon when the policy asks for it there
/// rather than on its own (never in a dry run).
pub fn start_in_daemon(
    cfg: &crate::config::Config,
    dry_run: bool,
) -> anyhow::Result<Option<InDaemon>> {
    if !cfg.pmem.in_daemon || dry_run {
        return Ok(None);
    }
    let broker = Arc::new(Broker::new(&cfg.pmem, &cfg.runtimes)?);
    let stop = Arc::new(AtomicBool::new(false));
    let thread = serve(broker, cfg.pmem.socket.clone(), stop.clone())?;
    Ok(Some(InDaemon { stop, thread }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusal_logging_is_rate_limited_per_caller() {
        let mut log = RefusalLog::default();
        let t0 = Instant::now();
        let logged = (0..20).filter(|_| log.admit("a", t0).0).count();
        assert_eq!(logged, REFUSALS_PER_MINUTE as usize);
        assert!(log.admit("b", t0).0, "another caller has its own budget");
        let (again, held_back) = log.admit("a", t0 + Duration::from_secs(61));
        assert!(again);
        assert_eq!(held_back, 20 - REFUSALS_PER_MINUTE);
    }
}
