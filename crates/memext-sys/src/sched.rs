//! The calling thread's CPU priority.

/// Sets the calling thread's nice value (-20 to 19), this thread only: on
/// Linux, setpriority(PRIO_PROCESS) given a thread id acts on that thread.
pub fn set_thread_nice(nice: i32) -> std::io::Result<()> {
    rustix::process::setpriority_process(Some(rustix::thread::gettid()), nice)?;
    Ok(())
}

/// The calling thread's id, for [`set_nice_of`] from another thread.
pub fn thread_id() -> i32 {
    rustix::thread::gettid().as_raw_pid()
}

/// Sets thread `tid`'s nice value (one of this process's threads): a
/// thread that waits for another's work lends it its priority this way.
pub fn set_nice_of(tid: i32, nice: i32) -> std::io::Result<()> {
    let pid = rustix::process::Pid::from_raw(tid)
        .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    rustix::process::setpriority_process(Some(pid), nice)?;
    Ok(())
}

/// The calling thread's nice value.
pub fn thread_nice() -> std::io::Result<i32> {
    Ok(rustix::process::getpriority_process(Some(
        rustix::thread::gettid(),
    ))?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_lowers_its_own_priority_and_no_other_threads() {
        let main = thread_nice().expect("nice");
        let lowered = std::thread::spawn(|| {
            set_thread_nice(19).expect("lower");
            thread_nice().expect("nice")
        })
        .join()
        .expect("thread");
        assert_eq!(lowered, 19);
        assert_eq!(
            thread_nice().expect("nice"),
            main,
            "the caller is unchanged"
        );
    }

    #[test]
    fn another_thread_is_reniced_by_its_id() {
        let (tx, rx) = std::sync::mpsc::channel();
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || {
            set_thread_nice(19).expect("lower");
            tx.send(thread_id()).expect("send");
            wait.recv().expect("go");
            thread_nice().expect("nice")
        });
        let tid = rx.recv().expect("tid");
        // Raising a priority again needs CAP_SYS_NICE (root here); lowering
        // it further never does.
        let want = if rustix::process::getuid().is_root() {
            5
        } else {
            19
        };
        set_nice_of(tid, want).expect("renice");
        go.send(()).expect("go");
        assert_eq!(t.join().expect("thread"), want);
        assert!(set_nice_of(0, 0).is_err(), "0 is no thread id");
    }
}
