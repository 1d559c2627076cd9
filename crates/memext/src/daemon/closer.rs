//! Wake events closed off the daemon's loop. Closing a v2 PSI trigger waits
//! in the kernel for an RCU grace period (`psi_trigger_destroy`): on this
//! host, on a child of the unified hierarchy while bench/faas ran beside,
//! 8.0 ms median, 16 ms p90 and 28 ms at most, against 0.04 ms to register
//! one and 0.02 ms to close a v1 threshold's eventfd (whose removal the
//! kernel defers to a worker; `docs/faas/s83-2026-12-07/psiclose.py`). The
//! observer drops a trigger at each wake it fires, so in the loop every wake
//! on v2 waited that long before it was served. It hands them here instead:
//! one thread drops them in the order given, and the closer's own drop waits
//! until every one is closed (nothing left open behind the daemon).

use std::sync::mpsc::{channel, Sender};
use std::thread::JoinHandle;

/// A thread that drops what it is given. Where the thread cannot be
/// started, or has gone, [`Closer::close`] drops in the caller.
pub struct Closer<T: Send + 'static> {
    items: Option<Sender<T>>,
    thread: Option<JoinHandle<()>>,
}

impl<T: Send + 'static> Closer<T> {
    /// Starts the thread, named `name`.
    pub fn start(name: &str) -> std::io::Result<Self> {
        let (items, rx) = channel::<T>();
        let thread = std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || rx.into_iter().for_each(drop))?;
        Ok(Self {
            items: Some(items),
            thread: Some(thread),
        })
    }

    /// A closer without a thread: drops in the caller.
    pub fn inline() -> Self {
        Self {
            items: None,
            thread: None,
        }
    }

    /// Drops `item` on the closer's thread (in the caller without one).
    pub fn close(&self, item: T) {
        match &self.items {
            // A send fails only with the thread gone: it hands the item
            // back, dropped here.
            Some(tx) => drop(tx.send(item)),
            None => drop(item),
        }
    }
}

impl<T: Send + 'static> Drop for Closer<T> {
    /// Waits until everything given is dropped.
    fn drop(&mut self) {
        self.items = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// Records the name of the thread that drops it.
    struct Recorder(Arc<Mutex<Vec<String>>>, u32);

    impl Drop for Recorder {
        fn drop(&mut self) {
            let name = std::thread::current().name().unwrap_or("").to_owned();
            self.0
                .lock()
                .expect("not poisoned")
                .push(format!("{}@{name}", self.1));
        }
    }

    #[test]
    fn what_it_is_given_is_dropped_on_its_thread_in_order_and_all_before_it_is_gone() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let closer = Closer::start("memext-closer-test").expect("a thread");
        for i in 0..3 {
            closer.close(Recorder(log.clone(), i));
        }
        drop(closer);
        assert_eq!(
            *log.lock().expect("not poisoned"),
            [
                "0@memext-closer-test",
                "1@memext-closer-test",
                "2@memext-closer-test"
            ]
        );
    }

    #[test]
    fn without_a_thread_it_drops_in_the_caller() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let closer = Closer::inline();
        closer.close(Recorder(log.clone(), 7));
        let here = std::thread::current().name().unwrap_or("").to_owned();
        assert_eq!(*log.lock().expect("not poisoned"), [format!("7@{here}")]);
    }
}
