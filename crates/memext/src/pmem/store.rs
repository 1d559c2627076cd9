//! The region files under the broker's root: one directory per region key,
//! one file per region name. Every path step is an `openat` from a directory
//! descriptor with O_NOFOLLOW, so a symlink or hard link planted under the root
//! is refused rather than followed; new files are made with O_EXCL and their
//! space reserved with fallocate, within the per-container and total quotas.

use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rustix::fs::{fstat, mkdirat, openat, unlinkat, AtFlags, Dir, FileType, Mode, OFlags};
use rustix::io::Errno;

use scm::protocol::{valid_name, OpenRequest};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("region root {path}")]
    Root {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("region key {key:?} is not a safe directory name")]
    BadKey { key: String },
    #[error("region name {name:?} is not valid")]
    BadName { name: String },
    #[error("{key}/{name}: {what}")]
    Unsafe {
        key: String,
        name: String,
        what: &'static str,
    },
    #[error("{key}/{name} does not exist (ask with create)")]
    Missing { key: String, name: String },
    #[error("{key}/{name} is {have} bytes, {asked} asked for")]
    TooSmall {
        key: String,
        name: String,
        have: u64,
        asked: u64,
    },
    #[error("{key}/{name}: a new region needs a size")]
    NoSize { key: String, name: String },
    #[error("{key}: {asked} more bytes would exceed the {which} quota of {quota} ({used} in use)")]
    Quota {
        key: String,
        which: &'static str,
        asked: u64,
        used: u64,
        quota: u64,
    },
    #[error("{op} {key}/{name}")]
    Io {
        op: &'static str,
        key: String,
        name: String,
        #[source]
        source: std::io::Error,
    },
}

impl StoreError {
    /// The reason sent back to the caller: short, and naming nothing of other containers.
    pub fn reason(&self) -> String {
        match self {
            StoreError::Root { .. } | StoreError::Io { .. } => {
                "the broker could not open the region".into()
            }
            StoreError::Quota { which, quota, .. } => {
                format!("{which} quota of {quota} bytes reached")
            }
            StoreError::Unsafe { what, .. } => format!("refused: {what}"),
            other => other.to_string(),
        }
    }
}

#[derive(Debug)]
pub struct RegionStore {
    root: OwnedFd,
    root_path: PathBuf,
    pub container_quota: u64,
    pub total_quota: u64,
    /// What the root is on: "tmpfs", "dax" or "disk" (told to callers).
    pub backing: &'static str,
    /// Creation is serialised so two callers cannot both pass a quota check.
    create: Mutex<()>,
}

const DIR_FLAGS: OFlags = OFlags::DIRECTORY
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC)
    .union(OFlags::RDONLY);

impl RegionStore {
    /// Opens (creating it 0700 if missing) the root directory.
    pub fn open(root: &Path, container_quota: u64, total_quota: u64) -> Result<Self, StoreError> {
        let err = |source: std::io::Error| StoreError::Root {
            path: root.to_path_buf(),
            source,
        };
        std::fs::create_dir_all(root).map_err(err)?;
        let fd = rustix::fs::open(root, DIR_FLAGS, Mode::empty()).map_err(|e| err(e.into()))?;
        rustix::fs::fchmod(&fd, Mode::from_raw_mode(0o700)).map_err(|e| err(e.into()))?;
        let fs = rustix::fs::fstatfs(&fd).map_err(|e| err(e.into()))?;
        #[allow(clippy::unnecessary_cast)]
        let backing = match fs.f_type as i64 {
            0x0102_1994 | 0x8584_58f6 => "tmpfs",
            _ => "disk",
        };
        Ok(Self {
            root: fd,
            root_path: root.to_path_buf(),
            container_quota,
            total_quota,
            backing,
            create: Mutex::new(()),
        })
    }

    pub fn root_path(&self) -> &Path {
        &self.root_path
    }

    /// The key's directory, made if `create`; `None` if it does not exist.
    fn key_dir(&self, key: &str, create: bool) -> Result<Option<OwnedFd>, StoreError> {
        if !valid_name(key) {
            return Err(StoreError::BadKey { key: key.into() });
        }
        let io = |op, source: Errno| StoreError::Io {
            op,
            key: key.into(),
            name: String::new(),
            source: source.into(),
        };
        if create {
            match mkdirat(&self.root, key, Mode::from_raw_mode(0o700)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(io("mkdir", e)),
            }
        }
        match openat(&self.root, key, DIR_FLAGS, Mode::empty()) {
            Ok(fd) => Ok(Some(fd)),
            Err(Errno::NOENT) => Ok(None),
            Err(Errno::LOOP | Errno::NOTDIR) => Err(StoreError::Unsafe {
                key: key.into(),
                name: String::new(),
                what: "the key directory is not a plain directory",
            }),
            Err(e) => Err(io("open", e)),
        }
    }

    /// Opens (or, with `create`, makes) region `req.name` of `key`.
    pub fn open_region(&self, key: &str, req: &OpenRequest) -> Result<(File, u64), StoreError> {
        if !valid_name(&req.name) {
            return Err(StoreError::BadName {
                name: req.name.clone(),
            });
        }
        let (k, n) = (key.to_string(), req.name.clone());
        let _serial = if req.create {
            Some(self.create.lock().unwrap_or_else(|p| p.into_inner()))
        } else {
            None
        };
        let Some(dir) = self.key_dir(key, req.create)? else {
            return Err(StoreError::Missing { key: k, name: n });
        };
        let flags = OFlags::RDWR | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = match openat(&dir, req.name.as_str(), flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) if req.create => return self.create_region(&dir, key, req),
            Err(Errno::NOENT) => return Err(StoreError::Missing { key: k, name: n }),
            Err(Errno::LOOP) => {
                return Err(StoreError::Unsafe {
                    key: k,
                    name: n,
                    what: "the region is a symlink",
                })
            }
            Err(e) => {
                return Err(StoreError::Io {
                    op: "open",
                    key: k,
                    name: n,
                    source: e.into(),
                })
            }
        };
        let st = fstat(&fd).map_err(|e| StoreError::Io {
            op: "fstat",
            key: k.clone(),
            name: n.clone(),
            source: e.into(),
        })?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(StoreError::Unsafe {
                key: k,
                name: n,
                what: "the region is not a regular file",
            });
        }
        if st.st_nlink != 1 {
            return Err(StoreError::Unsafe {
                key: k,
                name: n,
                what: "the region file has other links",
            });
        }
        let have = u64::try_from(st.st_size).unwrap_or(0);
        if req.size > have {
            return Err(StoreError::TooSmall {
                key: k,
                name: n,
                have,
                asked: req.size,
            });
        }
        Ok((File::from(fd), have))
    }

    fn create_region(
        &self,
        dir: &OwnedFd,
        key: &str,
        req: &OpenRequest,
    ) -> Result<(File, u64), StoreError> {
        let (k, n) = (key.to_string(), req.name.clone());
        if req.size == 0 {
            return Err(StoreError::NoSize { key: k, name: n });
        }
        let used_by_key = dir_bytes(dir);
        if used_by_key.saturating_add(req.size) > self.container_quota {
            return Err(StoreError::Quota {
                key: k,
                which: "container",
                asked: req.size,
                used: used_by_key,
                quota: self.container_quota,
            });
        }
        let used = self.total_bytes();
        if used.saturating_add(req.size) > self.total_quota {
            return Err(StoreError::Quota {
                key: k,
                which: "total",
                asked: req.size,
                used,
                quota: self.total_quota,
            });
        }
        let flags =
            OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd =
            openat(dir, req.name.as_str(), flags, Mode::from_raw_mode(0o600)).map_err(|e| {
                StoreError::Io {
                    op: "create",
                    key: k.clone(),
                    name: n.clone(),
                    source: e.into(),
                }
            })?;
        let sized =
            match rustix::fs::fallocate(&fd, rustix::fs::FallocateFlags::empty(), 0, req.size) {
                Err(Errno::OPNOTSUPP) => rustix::fs::ftruncate(&fd, req.size),
                other => other,
            };
        if let Err(e) = sized {
            let _ = unlinkat(dir, req.name.as_str(), AtFlags::empty());
            return Err(StoreError::Io {
                op: "fallocate",
                key: k,
                name: n,
                source: e.into(),
            });
        }
        Ok((File::from(fd), req.size))
    }

    /// Bytes of all regions under the root.
    pub fn total_bytes(&self) -> u64 {
        let mut total = 0;
        for_each_entry(&self.root, |name| {
            if let Ok(dir) = openat(&self.root, name, DIR_FLAGS, Mode::empty()) {
                total += dir_bytes(&dir);
            }
        });
        total
    }

    /// Every region of `key`, opened (for export).
    pub fn regions_of(&self, key: &str) -> Result<Vec<(String, File)>, StoreError> {
        let Some(dir) = self.key_dir(key, false)? else {
            return Ok(Vec::new());
        };
        let mut names = Vec::new();
        for_each_entry(&dir, |name| names.push(name.to_owned()));
        names.sort();
        let mut out = Vec::new();
        for name in names.into_iter().filter(|n| valid_name(n)) {
            let (file, _) = self.open_region(
                key,
                &OpenRequest {
                    name: name.clone(),
                    size: 0,
                    create: false,
                },
            )?;
            out.push((name, file));
        }
        Ok(out)
    }

    /// A new, empty region file `name` of `key` for import, within the quotas; never
    /// replaces an existing one.
    pub fn create_for_import(&self, key: &str, name: &str, size: u64) -> Result<File, StoreError> {
        let req = OpenRequest {
            name: name.to_owned(),
            size,
            create: true,
        };
        let _serial = self.create.lock().unwrap_or_else(|p| p.into_inner());
        let Some(dir) = self.key_dir(key, true)? else {
            return Err(StoreError::Missing {
                key: key.into(),
                name: name.into(),
            });
        };
        if statat_exists(&dir, name) {
            return Err(StoreError::Unsafe {
                key: key.into(),
                name: name.into(),
                what: "a region of that name exists",
            });
        }
        Ok(self.create_region(&dir, key, &req)?.0)
    }
}

fn statat_exists(dir: &OwnedFd, name: &str) -> bool {
    rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).is_ok()
}

fn for_each_entry(dir: &impl AsFd, mut f: impl FnMut(&str)) {
    let Ok(fd) = openat(dir, ".", DIR_FLAGS, Mode::empty()) else {
        return;
    };
    let Ok(mut entries) = Dir::read_from(&fd) else {
        return;
    };
    while let Some(Ok(e)) = entries.next() {
        if let Ok(name) = e.file_name().to_str() {
            if name != "." && name != ".." {
                f(name);
            }
        }
    }
}

/// Bytes of the regular files directly in `dir` (symlinks are not followed).
fn dir_bytes(dir: &OwnedFd) -> u64 {
    let mut total = 0;
    for_each_entry(dir, |name| {
        if let Ok(st) = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            if FileType::from_raw_mode(st.st_mode) == FileType::RegularFile {
                total += u64::try_from(st.st_size).unwrap_or(0);
            }
        }
    });
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(name: &str, size: u64, create: bool) -> OpenRequest {
        OpenRequest {
            name: name.into(),
            size,
            create,
        }
    }

    fn store(quota: u64, total: u64) -> (tempfile::TempDir, RegionStore) {
        let dir = tempfile::tempdir().expect("tempdir");
        let s = RegionStore::open(&dir.path().join("root"), quota, total).expect("store");
        (dir, s)
    }

    #[test]
    fn regions_are_created_once_sized_and_reopened() {
        let (_d, s) = store(1 << 20, 4 << 20);
        let (_f, size) = s
            .open_region("a", &req("heap", 65536, true))
            .expect("create");
        assert_eq!(size, 65536);
        let (_f, size) = s.open_region("a", &req("heap", 0, false)).expect("reopen");
        assert_eq!(size, 65536);
        assert!(matches!(
            s.open_region("a", &req("heap", 1 << 20, false)),
            Err(StoreError::TooSmall { .. })
        ));
        assert!(matches!(
            s.open_region("a", &req("other", 0, false)),
            Err(StoreError::Missing { .. })
        ));
        assert!(matches!(
            s.open_region("b", &req("heap", 0, false)),
            Err(StoreError::Missing { .. })
        ));
        assert!(matches!(
            s.open_region("a", &req("new", 0, true)),
            Err(StoreError::NoSize { .. })
        ));
    }

    #[test]
    fn quotas_hold_per_key_and_in_total() {
        let (_d, s) = store(100_000, 150_000);
        s.open_region("a", &req("r1", 60_000, true))
            .expect("within quota");
        assert!(matches!(
            s.open_region("a", &req("r2", 60_000, true)),
            Err(StoreError::Quota {
                which: "container",
                ..
            })
        ));
        s.open_region("b", &req("r1", 80_000, true))
            .expect("b within its quota");
        assert!(matches!(
            s.open_region("c", &req("r1", 20_000, true)),
            Err(StoreError::Quota { which: "total", .. })
        ));
        assert_eq!(s.total_bytes(), 140_000);
    }

    #[test]
    fn planted_symlinks_and_hard_links_are_refused() {
        let (d, s) = store(1 << 20, 4 << 20);
        s.open_region("victim", &req("secret", 4096, true))
            .expect("victim's region");
        let root = d.path().join("root");
        std::fs::create_dir(root.join("attacker")).expect("mkdir");
        std::os::unix::fs::symlink(root.join("victim/secret"), root.join("attacker/secret"))
            .expect("symlink");
        assert!(matches!(
            s.open_region("attacker", &req("secret", 0, false)),
            Err(StoreError::Unsafe { .. })
        ));
        assert!(matches!(
            s.open_region("attacker", &req("secret", 4096, true)),
            Err(StoreError::Unsafe { .. })
        ));
        std::fs::hard_link(root.join("victim/secret"), root.join("attacker/linked"))
            .expect("hard link");
        assert!(matches!(
            s.open_region("attacker", &req("linked", 0, false)),
            Err(StoreError::Unsafe { .. })
        ));
        std::os::unix::fs::symlink(root.join("victim"), root.join("mallory"))
            .expect("symlinked key dir");
        assert!(matches!(
            s.open_region("mallory", &req("secret", 0, false)),
            Err(StoreError::Unsafe { .. })
        ));
        assert!(matches!(
            s.open_region("..", &req("secret", 0, false)),
            Err(StoreError::BadKey { .. })
        ));
        assert!(matches!(
            s.open_region("a", &req("../victim", 0, false)),
            Err(StoreError::BadName { .. })
        ));
    }
}
