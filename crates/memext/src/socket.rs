//! A small accept loop for the daemon's Unix and TCP listeners (control
//! socket, metrics, pmem broker): it sleeps in poll(2) until a client
//! connects or a quarter second passes (so that a stop flag is seen), one
//! client at a time.

use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rustix::event::{poll, PollFd, PollFlags};

/// How long the loop sleeps without a client before it looks at `stop`.
const STOP_CHECK: Duration = Duration::from_millis(250);

/// A thread that accepts connections from a non-blocking `listener` (woken
/// by the kernel when a client connects, and every [`STOP_CHECK`] to see
/// `stop`) and answers each with `handle`, one at a time: the daemon's
/// clients are few and their answers small.
pub fn accept_loop<C: Send + 'static>(
    name: &str,
    stop: Arc<AtomicBool>,
    listener: OwnedFd,
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
                        wait_for_client(&listener)
                    }
                    Err(e) => tracing::warn!("{label}: {e}"),
                }
            }
        })
}

/// Sleeps until `listener` has a client waiting, or [`STOP_CHECK`] passed
/// (also on EINTR or an error: the loop looks at its flag and accepts again).
fn wait_for_client(listener: &OwnedFd) {
    let mut fds = [PollFd::new(listener, PollFlags::IN)];
    let timeout = rustix::time::Timespec {
        tv_sec: 0,
        tv_nsec: i64::from(STOP_CHECK.subsec_nanos()),
    };
    let _ = poll(&mut fds, Some(&timeout));
}

/// A descriptor of `listener` for [`accept_loop`] to sleep on.
pub fn listener_fd(listener: &impl AsFd) -> std::io::Result<OwnedFd> {
    listener.as_fd().try_clone_to_owned()
}
