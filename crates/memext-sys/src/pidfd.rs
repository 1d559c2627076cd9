//! A handle on another process that cannot be confused with a later process
//! reusing its pid: every action on a process goes through its pidfd.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::process::{pidfd_open, Pid as RPid, PidfdFlags};

use crate::Pid;

#[derive(Debug, thiserror::Error)]
pub enum PidfdError {
    #[error("process {pid} no longer exists")]
    Vanished { pid: Pid },
    #[error("pid {pid} is not a valid process id")]
    InvalidPid { pid: Pid },
    #[error("pidfd_open({pid}) failed")]
    Open {
        pid: Pid,
        #[source]
        source: std::io::Error,
    },
}

/// An open pidfd on one process.
#[derive(Debug)]
pub struct ProcessHandle {
    pid: Pid,
    fd: OwnedFd,
}

impl ProcessHandle {
    /// Opens a pidfd on `pid`. A process that has already exited gives
    /// [`PidfdError::Vanished`].
    pub fn open(pid: Pid) -> Result<Self, PidfdError> {
        let raw = i32::try_from(pid).map_err(|_| PidfdError::InvalidPid { pid })?;
        let rpid = RPid::from_raw(raw).ok_or(PidfdError::InvalidPid { pid })?;
        match pidfd_open(rpid, PidfdFlags::empty()) {
            Ok(fd) => Ok(Self { pid, fd }),
            Err(rustix::io::Errno::SRCH) => Err(PidfdError::Vanished { pid }),
            Err(e) => Err(PidfdError::Open {
                pid,
                source: e.into(),
            }),
        }
    }

    pub fn pid(&self) -> Pid {
        self.pid
    }
}

impl AsFd for ProcessHandle {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_own_process() {
        let h = ProcessHandle::open(std::process::id()).expect("own pid exists");
        assert_eq!(h.pid(), std::process::id());
    }

    #[test]
    fn a_pid_that_cannot_exist_is_vanished() {
        // The kernel never hands out a pid above pid_max, so no process has it.
        let max: Pid = std::fs::read_to_string("/proc/sys/kernel/pid_max")
            .expect("pid_max")
            .trim()
            .parse()
            .expect("a number");
        match ProcessHandle::open(max + 1) {
            Err(PidfdError::Vanished { pid }) => assert_eq!(pid, max + 1),
            other => panic!("expected Vanished, got {other:?}"),
        }
    }

    #[test]
    fn zero_pid_is_invalid() {
        assert!(matches!(
            ProcessHandle::open(0),
            Err(PidfdError::InvalidPid { .. })
        ));
    }
}
