//! v1 usage thresholds registered off the daemon's loop. The kernel waits
//! for an RCU grace period in each registration; in a bench/faas run on
//! this host the loop spent 13% of its time there, in 763 waits of 16 ms
//! median, 81 ms p90 and up to 0.78 s, each a stretch in which no wake was
//! served (session 80). A few threads register them instead: waits that
//! overlap share a grace period. The observer polls a context until its
//! threshold is in place.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};

use memext_cgroup::{CgroupError, ThresholdRegistrar, WakeEvent};
use rustix::event::{eventfd, EventfdFlags};

/// Threads registering at once.
pub const ARMING_THREADS: usize = 4;

/// One registration asked for.
struct Request {
    token: u64,
    registrar: ThresholdRegistrar,
    delta: u64,
}

/// One registration done, under the token it was asked with.
pub struct Armed {
    pub token: u64,
    pub result: Result<WakeEvent, CgroupError>,
}

/// The registering threads. Readable ([`Arming::as_fd`], an eventfd) while
/// registrations are done and not taken; dropping it lets the threads end
/// after the registration each is in.
pub struct Arming {
    requests: Option<Sender<Request>>,
    done: Receiver<Armed>,
    ready: Arc<OwnedFd>,
}

impl Arming {
    pub fn start() -> std::io::Result<Self> {
        let ready = Arc::new(eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)?);
        let (requests, rx) = channel::<Request>();
        let (tx, done) = channel();
        let rx = Arc::new(Mutex::new(rx));
        for i in 0..ARMING_THREADS {
            let (rx, tx, ready) = (rx.clone(), tx.clone(), ready.clone());
            std::thread::Builder::new()
                .name(format!("memext-arming-{i}"))
                .spawn(move || register_each(&rx, &tx, &ready))?;
        }
        Ok(Self {
            requests: Some(requests),
            done,
            ready,
        })
    }

    /// Asks for a threshold `delta` above the usage then, reported under `token`.
    pub fn ask(&self, token: u64, registrar: ThresholdRegistrar, delta: u64) {
        if let Some(tx) = &self.requests {
            let _ = tx.send(Request {
                token,
                registrar,
                delta,
            });
        }
    }

    /// The registrations done since the last call.
    pub fn take(&self) -> Vec<Armed> {
        let mut counter = [0u8; 8];
        // Non-blocking: nothing to read is as good as read.
        let _ = rustix::io::read(&*self.ready, &mut counter[..]);
        self.done.try_iter().collect()
    }
}

impl AsFd for Arming {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.ready.as_fd()
    }
}

impl Drop for Arming {
    fn drop(&mut self) {
        // The threads end when the channel closes.
        self.requests.take();
    }
}

fn register_each(rx: &Mutex<Receiver<Request>>, tx: &Sender<Armed>, ready: &OwnedFd) {
    loop {
        let next = match rx.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok(r) = next else {
            return;
        };
        let result = r.registrar.register(r.delta);
        if tx
            .send(Armed {
                token: r.token,
                result,
            })
            .is_err()
        {
            return;
        }
        let _ = rustix::io::write(ready, &1u64.to_ne_bytes());
    }
}
