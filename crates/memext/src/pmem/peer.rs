//! Who is calling the broker, decided on the host side only: the kernel names
//! the peer process (SO_PEERPIDFD, else SO_PEERCRED), /proc/PID/cgroup names its
//! cgroup, the runtime recognisers name the container. Nothing the caller sends
//! enters into it. The peer must still be alive after its cgroup was read, so a
//! pid that exited (and could be reused) is never attributed.

use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;

use memext_cgroup::CgroupPath;
use memext_sys::peer::{peer_cred, peer_pidfd, pidfd_alive, pidfd_pid, PeerError};
use memext_sys::pidfd::ProcessHandle;
use memext_sys::Pid;

use crate::identity::{identify, Identity};

#[derive(Debug, thiserror::Error)]
pub enum CallerError {
    #[error(transparent)]
    Peer(#[from] PeerError),
    #[error("the peer process {pid} exited before it could be identified")]
    Exited { pid: Pid },
    #[error("reading /proc/{pid}/cgroup")]
    Cgroup {
        pid: Pid,
        #[source]
        source: std::io::Error,
    },
}

/// A caller as the host sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub pid: Pid,
    pub uid: u32,
    /// The container it runs in; `None` for a host process.
    pub container: Option<Identity>,
    /// Whether the kernel gave a pidfd (SO_PEERPIDFD) or only a pid (SO_PEERCRED).
    pub by_pidfd: bool,
}

/// The container a process belongs to, from the text of /proc/PID/cgroup: the
/// deepest cgroup on any line (or any of its ancestors) that a runtime made.
pub fn container_of(proc_cgroup: &str) -> Option<Identity> {
    proc_cgroup.lines().find_map(|line| {
        let path = line.splitn(3, ':').nth(2)?;
        let mut p = CgroupPath::parse(path).ok()?;
        loop {
            if let Some(id) = identify(&p).filter(|id| id.runtime.is_container()) {
                return Some(id);
            }
            p = p.parent()?;
        }
    })
}

/// Identifies the process at the other end of `stream`.
pub fn identify_caller(stream: &UnixStream) -> Result<Caller, CallerError> {
    let cred = peer_cred(stream.as_fd())?;
    let (pidfd, by_pidfd) = match peer_pidfd(stream.as_fd())? {
        Some(fd) => (fd, true),
        // Older kernels: a pidfd opened now, which narrows but cannot close the window
        // in which the connecting process exits and its pid is reused.
        None => match ProcessHandle::open(cred.pid) {
            Ok(h) => (
                h.as_fd()
                    .try_clone_to_owned()
                    .map_err(|source| CallerError::Cgroup {
                        pid: cred.pid,
                        source,
                    })?,
                false,
            ),
            Err(_) => return Err(CallerError::Exited { pid: cred.pid }),
        },
    };
    let pid = pidfd_pid(pidfd.as_fd()).map_err(|_| CallerError::Exited { pid: cred.pid })?;
    let text = read_capped(&format!("/proc/{pid}/cgroup"))
        .map_err(|source| CallerError::Cgroup { pid, source })?;
    // The pidfd still refers to a running process, so /proc/{pid} was that process.
    if !pidfd_alive(&pidfd) {
        return Err(CallerError::Exited { pid });
    }
    Ok(Caller {
        pid,
        uid: cred.uid,
        container: container_of(&text),
        by_pidfd,
    })
}

fn read_capped(path: &str) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(64 * 1024)
        .read_to_string(&mut text)?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::Runtime;

    const ID: &str = "3f4e5d6c7b8a99887766554433221100ffeeddccbbaa00112233445566778899";

    #[test]
    fn a_docker_container_on_a_v1_host_is_found_on_its_memory_line() {
        let text = format!(
            "13:memory:/memext-docker/{ID}\n12:cpu,cpuacct:/memext-docker/{ID}\n0::/process_api\n"
        );
        let id = container_of(&text).expect("a container");
        assert_eq!((id.runtime, id.id.as_str()), (Runtime::Docker, ID));
    }

    #[test]
    fn a_process_in_a_sub_cgroup_of_a_container_belongs_to_it() {
        let text = format!("0::/system.slice/docker-{ID}.scope/init\n");
        assert_eq!(container_of(&text).expect("a container").id, ID);
    }

    #[test]
    fn host_processes_and_malformed_lines_are_no_container() {
        assert_eq!(container_of("0::/user.slice/session-1.scope\n"), None);
        assert_eq!(container_of("garbage\n0::relative/path\n"), None);
        assert_eq!(container_of(""), None);
    }
}
