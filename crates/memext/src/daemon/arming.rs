//! v1 usage thresholds registered off the daemon's loop. The kernel waits
//! for an RCU grace period in each registration; in a bench/faas run on
//! this host the loop spent 13% of its time there, in 763 waits of 16 ms
//! median, 81 ms p90 and up to 0.78 s, each a stretch in which no wake was
//! served (session 80). A few threads register them instead: waits that
//! overlap share a grace period. The observer polls a context until its
//! threshold is in place.

use std::collections::HashMap;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};

use memext_cgroup::{CgroupError, ThresholdRegistrar, WakeEvent};
use memext_engine::ContextId;
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
struct Done {
    token: u64,
    result: Result<WakeEvent, CgroupError>,
}

/// A registration done for a context still waiting for it.
pub struct Registered {
    pub id: ContextId,
    pub token: u64,
    /// The usage the daemon gave when it was asked for.
    pub usage: u64,
    pub result: Result<WakeEvent, CgroupError>,
}

/// The registering threads and the registrations under way. Readable
/// ([`Arming::as_fd`], an eventfd) while registrations are done and not
/// collected; dropped, it lets the threads end after the registration each
/// is in. A registration done for a context no longer waiting for it is
/// dropped, and so removed from the kernel.
pub struct Arming {
    requests: Sender<Request>,
    done: Receiver<Done>,
    ready: Arc<OwnedFd>,
    /// Contexts waiting for their threshold: its token and their usage.
    pending: HashMap<ContextId, (u64, u64)>,
    /// Registrations collected, not yet taken.
    arrived: Vec<Done>,
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
            requests,
            done,
            ready,
            pending: HashMap::new(),
            arrived: Vec::new(),
        })
    }

    /// Asks for `id`'s threshold `delta` above its usage then (`usage`: the
    /// daemon's), to be taken under `token`.
    pub fn ask(
        &mut self,
        id: &ContextId,
        usage: u64,
        token: u64,
        registrar: ThresholdRegistrar,
        delta: u64,
    ) {
        let request = Request {
            token,
            registrar,
            delta,
        };
        if self.requests.send(request).is_ok() {
            self.pending.insert(id.clone(), (token, usage));
        }
    }

    /// Whether `id` waits for its threshold.
    pub fn is_pending(&self, id: &ContextId) -> bool {
        self.pending.contains_key(id)
    }

    /// Stops waiting for the contexts `keep` says no to.
    pub fn cancel_unless(&mut self, keep: impl Fn(&ContextId) -> bool) {
        self.pending.retain(|id, _| keep(id));
    }

    /// Collects the registrations done (and clears the descriptor's readiness).
    pub fn collect(&mut self) {
        let mut counter = [0u8; 8];
        // Non-blocking: nothing to read is as good as read.
        let _ = rustix::io::read(&*self.ready, &mut counter[..]);
        self.arrived.extend(self.done.try_iter());
    }

    /// Whether registrations were collected and not taken.
    pub fn has_arrived(&self) -> bool {
        !self.arrived.is_empty()
    }

    /// The registrations done for contexts still waiting for them.
    pub fn take(&mut self) -> Vec<Registered> {
        self.collect();
        let mut out = Vec::new();
        for d in std::mem::take(&mut self.arrived) {
            let waiting = self
                .pending
                .iter()
                .find(|(_, (token, _))| *token == d.token)
                .map(|(id, (_, usage))| (id.clone(), *usage));
            if let Some((id, usage)) = waiting {
                self.pending.remove(&id);
                out.push(Registered {
                    id,
                    token: d.token,
                    usage,
                    result: d.result,
                });
            }
        }
        out
    }
}

impl AsFd for Arming {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.ready.as_fd()
    }
}

fn register_each(rx: &Mutex<Receiver<Request>>, tx: &Sender<Done>, ready: &OwnedFd) {
    loop {
        let next = match rx.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        // The channel closes when the `Arming` is dropped.
        let Ok(r) = next else {
            return;
        };
        let result = r.registrar.register(r.delta);
        if tx
            .send(Done {
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
