//! The calling thread's CPU priority.

/// Sets the calling thread's nice value (-20 to 19), this thread only: on
/// Linux, setpriority(PRIO_PROCESS) given a thread id acts on that thread.
pub fn set_thread_nice(nice: i32) -> std::io::Result<()> {
    rustix::process::setpriority_process(Some(rustix::thread::gettid()), nice)?;
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
}
