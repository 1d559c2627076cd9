//! Who is on the other end of a Unix socket, asked of the kernel, never of the
//! peer: SO_PEERPIDFD (Linux 6.5+) gives a pidfd on the process that connected,
//! which cannot be confused with a later process reusing its pid; SO_PEERCRED
//! (any kernel) gives the pid, uid and gid at connect time.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

use crate::Pid;

/// SO_PEERPIDFD from <asm-generic/socket.h>; libc may not name it yet.
const SO_PEERPIDFD: libc::c_int = 77;

#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    #[error("getsockopt({option}) on the connection")]
    Sockopt {
        option: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("reading /proc/self/fdinfo/{fd} of the peer's pidfd")]
    FdInfo {
        fd: i32,
        #[source]
        source: std::io::Error,
    },
    #[error("the peer process has exited")]
    Exited,
}

/// The kernel's record of a connected peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerCred {
    pub pid: Pid,
    pub uid: u32,
    pub gid: u32,
}

/// SO_PEERCRED: the peer's pid, uid and gid when it connected.
pub fn peer_cred(socket: BorrowedFd<'_>) -> Result<PeerCred, PeerError> {
    let ucred = rustix::net::sockopt::socket_peercred(socket).map_err(|e| PeerError::Sockopt {
        option: "SO_PEERCRED",
        source: e.into(),
    })?;
    let pid = u32::try_from(ucred.pid.as_raw_nonzero().get()).map_err(|_| PeerError::Exited)?;
    Ok(PeerCred {
        pid,
        uid: ucred.uid.as_raw(),
        gid: ucred.gid.as_raw(),
    })
}

/// SO_PEERPIDFD: a pidfd on the process that connected. `Ok(None)` on kernels
/// without it (ENOPROTOOPT), where callers fall back to [`peer_cred`].
pub fn peer_pidfd(socket: BorrowedFd<'_>) -> Result<Option<OwnedFd>, PeerError> {
    let mut fd: libc::c_int = -1;
    let mut len: libc::socklen_t = 4; // size_of::<c_int>()
                                      // SAFETY: getsockopt writes at most `len` bytes (one c_int) into `fd`, a live local,
                                      // and updates `len`; the socket fd is borrowed and stays open for the call.
    let rc = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            SO_PEERPIDFD,
            (&mut fd as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        let err = std::io::Error::last_os_error();
        return match err.raw_os_error() {
            Some(libc::ENOPROTOOPT) => Ok(None),
            // ESRCH: the peer is already gone (reaped).
            Some(libc::ESRCH) => Err(PeerError::Exited),
            _ => Err(PeerError::Sockopt {
                option: "SO_PEERPIDFD",
                source: err,
            }),
        };
    }
    // SAFETY: on success the kernel installed a new pidfd that this process now owns.
    Ok(Some(unsafe { OwnedFd::from_raw_fd(fd) }))
}

/// The pid a pidfd refers to, from /proc/self/fdinfo; [`PeerError::Exited`] once the
/// process is gone (the kernel then reports -1).
pub fn pidfd_pid(pidfd: BorrowedFd<'_>) -> Result<Pid, PeerError> {
    let fd = pidfd.as_raw_fd();
    let text = std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}"))
        .map_err(|source| PeerError::FdInfo { fd, source })?;
    let pid = text
        .lines()
        .find_map(|l| l.strip_prefix("Pid:"))
        .map(str::trim)
        .ok_or_else(|| PeerError::FdInfo {
            fd,
            source: std::io::Error::other("no Pid: line"),
        })?;
    match pid.parse::<i64>() {
        Ok(p) if p > 0 => u32::try_from(p).map_err(|_| PeerError::Exited),
        _ => Err(PeerError::Exited),
    }
}

/// True while the process behind `pidfd` is still running: a pidfd becomes
/// readable when its process exits.
pub fn pidfd_alive(pidfd: impl AsFd) -> bool {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let mut fds = [PollFd::new(&pidfd, PollFlags::IN)];
    matches!(
        poll(
            &mut fds,
            Some(&Timespec {
                tv_sec: 0,
                tv_nsec: 0
            })
        ),
        Ok(0)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixStream;

    #[test]
    fn a_socket_pair_names_this_process() {
        let (a, _b) = UnixStream::pair().expect("socketpair");
        let cred = peer_cred(a.as_fd()).expect("SO_PEERCRED");
        assert_eq!(cred.pid, std::process::id());
        assert_eq!(cred.uid, rustix::process::getuid().as_raw());
        if let Some(pidfd) = peer_pidfd(a.as_fd()).expect("SO_PEERPIDFD or ENOPROTOOPT") {
            assert_eq!(
                pidfd_pid(pidfd.as_fd()).expect("pid of our own pidfd"),
                std::process::id()
            );
            assert!(pidfd_alive(&pidfd), "this process is running");
        }
    }

    #[test]
    fn an_exited_child_is_not_alive() {
        let mut child = std::process::Command::new("true")
            .spawn()
            .expect("spawn true");
        let pid =
            rustix::process::Pid::from_raw(child.id() as i32).expect("a child pid is positive");
        let pidfd = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty())
            .expect("pidfd_open");
        child.wait().expect("wait");
        assert!(!pidfd_alive(&pidfd));
        assert!(matches!(pidfd_pid(pidfd.as_fd()), Err(PeerError::Exited)));
    }
}
