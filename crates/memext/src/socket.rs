//! A small accept loop for the daemon's Unix and TCP listeners (control
//! socket, metrics, pmem broker): non-blocking accept, polled so that a stop
//! flag is seen, one client at a time.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A thread that accepts connections from a non-blocking listener (polling
/// every 50 ms, so that `stop` is seen) and answers each with `handle`, one at
/// a time: the daemon's clients are few and their answers small.
pub fn accept_loop<C: Send + 'static>(
    name: &str,
    stop: Arc<AtomicBool>,
    mut accept: impl FnMut() -> std::io::Result<C> + Send + 'static,
    mut handle: impl FnMut(C) -> anyhow::Result<()> + Send + 'static,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    let label = name.to_owned();
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                match accept() {
                    Ok(conn) => {
                        if let Err(e) = handle(conn) {
                            tracing::debug!("{label} client: {e:#}");
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(50))
                    }
                    Err(e) => tracing::warn!("{label}: {e}"),
                }
            }
        })
}
