//! Threads' CPU priority: nice values and the idle policy.

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
    rustix::process::setpriority_process(Some(pid_of(tid)?), nice)?;
    Ok(())
}

/// A thread id as rustix takes it (0 is none: it would mean the caller).
fn pid_of(tid: i32) -> std::io::Result<rustix::process::Pid> {
    rustix::process::Pid::from_raw(tid)
        .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::InvalidInput))
}

/// How a thread competes for the CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Priority {
    /// The normal policy (SCHED_OTHER) at this nice value, -20 to 19.
    Nice(i32),
    /// SCHED_IDLE: the thread runs on CPU time no normal task wants. A
    /// normal task that wakes preempts it at once, whatever the two
    /// weigh, and a CPU that runs only such threads takes a waking task as
    /// an idle one would. A nice-19 thread, by contrast, still outweighs a
    /// task of a low-weight cgroup whose siblings carry its group's weight
    /// on other CPUs, and keeps the CPU until the next tick.
    Idle,
}

/// Sets thread `tid`'s priority (one of this process's threads).
pub fn set_priority_of(tid: i32, priority: Priority) -> std::io::Result<()> {
    pid_of(tid)?;
    let policy = match priority {
        Priority::Nice(_) => libc::SCHED_OTHER,
        Priority::Idle => libc::SCHED_IDLE,
    };
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `param` is a valid sched_param that outlives the call, which
    // only reads it; a bad tid or policy is reported through errno.
    if unsafe { libc::sched_setscheduler(tid, policy, &param) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    match priority {
        Priority::Nice(nice) => set_nice_of(tid, nice),
        Priority::Idle => Ok(()),
    }
}

/// Sets the calling thread's priority, this thread only.
pub fn set_thread_priority(priority: Priority) -> std::io::Result<()> {
    set_priority_of(thread_id(), priority)
}

/// Thread `tid`'s priority (a realtime policy reads as its nice value).
pub fn priority_of(tid: i32) -> std::io::Result<Priority> {
    let pid = pid_of(tid)?;
    // SAFETY: sched_getscheduler takes a tid by value and touches no memory.
    match unsafe { libc::sched_getscheduler(tid) } {
        -1 => Err(std::io::Error::last_os_error()),
        libc::SCHED_IDLE => Ok(Priority::Idle),
        _ => Ok(Priority::Nice(rustix::process::getpriority_process(Some(
            pid,
        ))?)),
    }
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

    #[test]
    fn a_thread_goes_idle_and_back_to_a_nice_value() {
        let (main, main_tid) = (priority_of(thread_id()).expect("main"), thread_id());
        let seen = std::thread::spawn(|| {
            let me = thread_id();
            set_thread_priority(Priority::Idle).expect("idle");
            let idle = priority_of(me).expect("read");
            // Leaving the idle policy needs CAP_SYS_NICE or a nice limit
            // that allows it (root here); a plain user may be refused.
            let back = set_priority_of(me, Priority::Nice(19))
                .ok()
                .map(|()| priority_of(me).expect("read"));
            (idle, back)
        })
        .join()
        .expect("thread");
        assert_eq!(seen.0, Priority::Idle);
        if rustix::process::getuid().is_root() {
            assert_eq!(seen.1, Some(Priority::Nice(19)));
        }
        assert_eq!(
            priority_of(main_tid).expect("main"),
            main,
            "the caller is unchanged"
        );
        assert!(
            set_priority_of(0, Priority::Idle).is_err(),
            "0 is no thread id"
        );
    }
}
