//! Reading and writing control files relative to a cgroup's directory fd,
//! never following symlinks. ENOENT/ENODEV mean the cgroup went away.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::fs::{openat, Mode, OFlags, CWD};

use crate::parse::ParseError;
use crate::{CgroupError, CgroupPath};

/// An open cgroup directory.
#[derive(Debug)]
pub(crate) struct CgroupDir {
    pub(crate) path: CgroupPath,
    fd: OwnedFd,
}

fn gone(e: rustix::io::Errno) -> bool {
    matches!(
        e,
        rustix::io::Errno::NOENT | rustix::io::Errno::NODEV | rustix::io::Errno::SRCH
    )
}

impl CgroupDir {
    pub(crate) fn open(dir: &Path, path: &CgroupPath) -> Result<Self, CgroupError> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NOFOLLOW;
        match openat(CWD, dir, flags, Mode::empty()) {
            Ok(fd) => Ok(Self {
                path: path.clone(),
                fd,
            }),
            Err(e) if gone(e) => Err(CgroupError::Vanished { path: path.clone() }),
            Err(e) => Err(CgroupError::Read {
                path: path.clone(),
                file: dir.display().to_string(),
                source: e.into(),
            }),
        }
    }

    /// The same directory through a descriptor of its own (for another
    /// thread to use).
    pub(crate) fn try_clone(&self) -> Result<Self, CgroupError> {
        match rustix::io::fcntl_dupfd_cloexec(&self.fd, 0) {
            Ok(fd) => Ok(Self {
                path: self.path.clone(),
                fd,
            }),
            Err(e) => Err(CgroupError::Read {
                path: self.path.clone(),
                file: "dup".into(),
                source: e.into(),
            }),
        }
    }

    pub(crate) fn exists(&self, file: &str) -> bool {
        rustix::fs::statat(&self.fd, file, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).is_ok()
    }

    /// Opens `file` of this cgroup without following symlinks; `err` wraps
    /// any failure other than the cgroup having gone.
    fn open_file(
        &self,
        file: &str,
        flags: OFlags,
        err: impl FnOnce(std::io::Error) -> CgroupError,
    ) -> Result<File, CgroupError> {
        match openat(
            &self.fd,
            file,
            flags | OFlags::CLOEXEC | OFlags::NOFOLLOW,
            Mode::empty(),
        ) {
            Ok(fd) => Ok(File::from(fd)),
            Err(e) if gone(e) => Err(CgroupError::Vanished {
                path: self.path.clone(),
            }),
            Err(e) => Err(err(e.into())),
        }
    }

    /// Opens `file` for the caller to keep (wake events).
    pub(crate) fn open_fd(&self, file: &str, flags: OFlags) -> Result<OwnedFd, CgroupError> {
        let err = |e: std::io::Error| CgroupError::Read {
            path: self.path.clone(),
            file: file.into(),
            source: e,
        };
        self.open_file(file, flags, err).map(OwnedFd::from)
    }

    pub(crate) fn read(&self, file: &str) -> Result<String, CgroupError> {
        crate::count_read();
        let err = |e: std::io::Error| CgroupError::Read {
            path: self.path.clone(),
            file: file.into(),
            source: e,
        };
        let mut s = String::new();
        match self
            .open_file(file, OFlags::RDONLY, err)?
            .read_to_string(&mut s)
        {
            Ok(_) => Ok(s),
            Err(e) if matches!(e.raw_os_error(), Some(2) | Some(19)) => {
                Err(CgroupError::Vanished {
                    path: self.path.clone(),
                })
            }
            Err(e) => Err(err(e)),
        }
    }

    /// Reads `file` through `held`, opening it there the first time: one
    /// system call per read after that (pread from the start: a control file
    /// is generated anew at offset 0).
    pub(crate) fn read_held(&self, file: &str, held: &HeldFile) -> Result<String, CgroupError> {
        use std::os::unix::fs::FileExt as _;
        crate::count_read();
        let f = match held.0.get() {
            Some(f) => f,
            None => {
                let fd = self.open_fd(file, OFlags::RDONLY)?;
                held.0.get_or_init(|| File::from(fd))
            }
        };
        let mut buf = [0u8; 1024];
        match f.read_at(&mut buf, 0) {
            Ok(n) => Ok(String::from_utf8_lossy(&buf[..n]).into_owned()),
            Err(e) if matches!(e.raw_os_error(), Some(2) | Some(19)) => {
                Err(CgroupError::Vanished {
                    path: self.path.clone(),
                })
            }
            Err(e) => Err(CgroupError::Read {
                path: self.path.clone(),
                file: file.into(),
                source: e,
            }),
        }
    }

    /// Reads `file` and parses it with `parse`.
    pub(crate) fn read_with<T>(
        &self,
        file: &str,
        parse: impl FnOnce(&str) -> Result<T, ParseError>,
    ) -> Result<T, CgroupError> {
        let text = self.read(file)?;
        parse(&text).map_err(|source| CgroupError::Parse {
            path: self.path.clone(),
            file: file.into(),
            source,
        })
    }

    pub(crate) fn write(&self, file: &str, value: &str) -> Result<(), CgroupError> {
        let err = |e: std::io::Error| CgroupError::Write {
            path: self.path.clone(),
            file: file.into(),
            value: value.into(),
            source: e,
        };
        // O_TRUNC is what a shell redirection uses on cgroupfs; it also keeps fake trees faithful.
        let mut f = self.open_file(file, OFlags::WRONLY | OFlags::TRUNC, err)?;
        // One write(2): the kernel parses each write of a control file separately.
        f.write(value.as_bytes()).map(|_| ()).map_err(err)
    }
}

/// A small control file held open for reads that repeat (a context's CPU
/// time, read at every tick): see [`CgroupDir::read_held`].
#[derive(Debug, Default)]
pub(crate) struct HeldFile(std::sync::OnceLock<File>);
