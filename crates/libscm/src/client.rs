//! Asking the pmem broker for a region: one request, one reply, one descriptor.
//! The broker decides whose region it is from the connection itself; the client
//! sends only a name and a size.

use std::io::{IoSlice, IoSliceMut, Write};
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

use rustix::net::{recvmsg, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags};

use crate::error::RegionError;
use crate::protocol::{OpenRequest, Reply, DEFAULT_SOCKET, MAX_LINE};

/// The broker socket: `SCM_BROKER_SOCKET`, else the default path.
pub fn broker_socket() -> PathBuf {
    std::env::var_os("SCM_BROKER_SOCKET")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(DEFAULT_SOCKET))
}

/// Opens (or creates) the caller's region `name` through the broker at `socket`.
pub fn open_via_broker(
    socket: &Path,
    request: &OpenRequest,
) -> Result<(OwnedFd, u64), RegionError> {
    let broker = |what: String| RegionError::Broker {
        socket: socket.to_path_buf(),
        what,
    };
    let mut stream = UnixStream::connect(socket).map_err(|e| broker(format!("connect: {e}")))?;
    stream
        .write_all(request.to_line().as_bytes())
        .map_err(|e| broker(format!("send: {e}")))?;

    let mut line = [0u8; MAX_LINE];
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut ancillary = RecvAncillaryBuffer::new(&mut space);
    let received = recvmsg(
        &stream,
        &mut [IoSliceMut::new(&mut line)],
        &mut ancillary,
        RecvFlags::CMSG_CLOEXEC,
    )
    .map_err(|e| broker(format!("receive: {e}")))?;
    let mut fds: Vec<OwnedFd> = Vec::new();
    for message in ancillary.drain() {
        if let RecvAncillaryMessage::ScmRights(rights) = message {
            fds.extend(rights);
        }
    }
    let text = std::str::from_utf8(&line[..received.bytes])
        .map_err(|_| broker("reply is not text".into()))?;
    match Reply::parse(text).map_err(broker)? {
        Reply::Err { reason } => Err(RegionError::Refused {
            socket: socket.to_path_buf(),
            reason,
        }),
        Reply::Ok { size, .. } => match fds.len() {
            1 => Ok((fds.remove(0), size)),
            n => Err(broker(format!("OK reply with {n} descriptors"))),
        },
    }
}

/// Sends a reply, with `fd` attached when there is one (used by the broker).
pub fn send_reply(
    stream: &UnixStream,
    reply: &Reply,
    fd: Option<std::os::fd::BorrowedFd<'_>>,
) -> std::io::Result<()> {
    use rustix::net::{sendmsg, SendAncillaryBuffer, SendAncillaryMessage, SendFlags};
    let line = reply.to_line();
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut ancillary = SendAncillaryBuffer::new(&mut space);
    let fds;
    if let Some(fd) = fd {
        fds = [fd];
        ancillary.push(SendAncillaryMessage::ScmRights(&fds));
    }
    sendmsg(
        stream,
        &[IoSlice::new(line.as_bytes())],
        &mut ancillary,
        SendFlags::NOSIGNAL,
    )?;
    Ok(())
}
