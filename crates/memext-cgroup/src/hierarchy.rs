//! The mounted cgroup hierarchy: which version holds the memory controller,
//! where, and the operations on the tree itself (walk, create, attach, remove).

use std::path::{Path, PathBuf};

use crate::{
    v1::V1Cgroup, v1::V1Roots, v2::V2Cgroup, AnyCgroup, CgroupError, CgroupPath, PathError, Version,
};

#[derive(Debug, thiserror::Error)]
pub enum HierarchyError {
    #[error("no cgroup memory controller under {root} (neither a v1 memory hierarchy nor cgroup2 with memory)")]
    NoMemoryController { root: PathBuf },
    #[error("{op} {path} failed")]
    Io {
        op: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Cgroup(#[from] CgroupError),
    #[error(transparent)]
    Path(#[from] PathError),
}

/// Where the cgroup controllers memext uses are mounted.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Hierarchy {
    pub version: Version,
    /// The cgroup file system root, e.g. `/sys/fs/cgroup`.
    pub root: PathBuf,
    /// Where memory cgroups live: `ROOT/memory` on v1, `ROOT` on v2.
    pub memory_root: PathBuf,
    /// v1 only: the cpuacct hierarchy.
    pub cpuacct_root: Option<PathBuf>,
    /// v1 only: the cpu hierarchy (`cpu.shares`; often the same as cpuacct's).
    pub cpu_root: Option<PathBuf>,
    /// v1 only: the freezer hierarchy (`freezer.state`).
    pub freezer_root: Option<PathBuf>,
    /// v1 only: a cgroup2 tree mounted beside v1 that carries PSI files.
    pub psi_root: Option<PathBuf>,
}

impl Hierarchy {
    /// The default mount point.
    pub const DEFAULT_ROOT: &'static str = "/sys/fs/cgroup";

    /// Finds out how cgroups are mounted under `root`.
    pub fn probe(root: &Path) -> Result<Self, HierarchyError> {
        let v1_memory = root.join("memory");
        if v1_memory.join("memory.stat").is_file()
            && v1_memory.join("memory.limit_in_bytes").is_file()
        {
            let cpuacct_root = ["cpuacct", "cpu,cpuacct", "cpuacct,cpu"]
                .iter()
                .map(|d| root.join(d))
                .find(|d| d.join("cpuacct.usage").is_file());
            let cpu_root = ["cpu", "cpu,cpuacct", "cpuacct,cpu"]
                .iter()
                .map(|d| root.join(d))
                .find(|d| d.join("cpu.shares").is_file());
            // The freezer's root cgroup has no freezer.state of its own.
            let freezer_root =
                Some(root.join("freezer")).filter(|d| d.join("cgroup.procs").is_file());
            let psi_root = ["unified", ""]
                .iter()
                .map(|d| {
                    if d.is_empty() {
                        root.to_path_buf()
                    } else {
                        root.join(d)
                    }
                })
                .find(|d| d.join("cgroup.controllers").is_file());
            return Ok(Self {
                version: Version::V1,
                root: root.into(),
                memory_root: v1_memory,
                cpuacct_root,
                cpu_root,
                freezer_root,
                psi_root,
            });
        }
        let controllers =
            std::fs::read_to_string(root.join("cgroup.controllers")).unwrap_or_default();
        if controllers.split_whitespace().any(|c| c == "memory") {
            return Ok(Self {
                version: Version::V2,
                root: root.into(),
                memory_root: root.into(),
                cpuacct_root: None,
                cpu_root: None,
                freezer_root: None,
                psi_root: None,
            });
        }
        Err(HierarchyError::NoMemoryController { root: root.into() })
    }

    pub fn open(&self, path: &CgroupPath) -> Result<AnyCgroup, CgroupError> {
        Ok(match self.version {
            Version::V1 => AnyCgroup::V1(V1Cgroup::open(
                &self.memory_root,
                V1Roots {
                    cpuacct: self.cpuacct_root.as_deref(),
                    cpu: self.cpu_root.as_deref(),
                    freezer: self.freezer_root.as_deref(),
                    psi: self.psi_root.as_deref(),
                },
                path,
            )?),
            Version::V2 => AnyCgroup::V2(V2Cgroup::open(&self.memory_root, path)?),
        })
    }

    /// Every cgroup below the root of the memory hierarchy, parents before
    /// children, in name order. Cgroups that vanish during the walk are skipped.
    pub fn walk(&self) -> Result<Vec<CgroupPath>, HierarchyError> {
        let mut out = Vec::new();
        walk_dir(&self.memory_root, &CgroupPath::root(), &mut out).map_err(|source| {
            HierarchyError::Io {
                op: "walk",
                path: self.memory_root.clone(),
                source,
            }
        })?;
        Ok(out)
    }

    /// The directories that hold `path` in each hierarchy memext uses.
    fn dirs(&self, path: &CgroupPath) -> Vec<PathBuf> {
        let mut v = vec![path.under(&self.memory_root)];
        v.extend(self.cpuacct_root.iter().map(|r| path.under(r)));
        v.extend(
            self.cpu_root
                .iter()
                .filter(|r| Some(*r) != self.cpuacct_root.as_ref())
                .map(|r| path.under(r)),
        );
        v.extend(self.freezer_root.iter().map(|r| path.under(r)));
        v.extend(self.psi_root.iter().map(|r| path.under(r)));
        v
    }

    /// Creates `path` (and missing parents) in every hierarchy memext uses; on
    /// v2 enables the memory and cpu controllers for the children of each parent.
    pub fn create(&self, path: &CgroupPath) -> Result<AnyCgroup, HierarchyError> {
        let mut chain: Vec<CgroupPath> = Vec::new();
        let mut p = Some(path.clone());
        while let Some(q) = p {
            if q.is_root() {
                break;
            }
            p = q.parent();
            chain.push(q);
        }
        for q in chain.iter().rev() {
            if self.version == Version::V2 {
                let parent = q
                    .parent()
                    .unwrap_or_else(CgroupPath::root)
                    .under(&self.memory_root);
                enable_controllers(&parent)?;
            }
            for dir in self.dirs(q) {
                make_dir(&dir).map_err(|source| HierarchyError::Io {
                    op: "mkdir",
                    path: dir,
                    source,
                })?;
            }
        }
        Ok(self.open(path)?)
    }

    /// Moves process `pid` into `path` in every hierarchy memext uses.
    pub fn attach(&self, path: &CgroupPath, pid: u32) -> Result<(), HierarchyError> {
        for dir in self.dirs(path) {
            let file = dir.join("cgroup.procs");
            std::fs::write(&file, pid.to_string()).map_err(|source| HierarchyError::Io {
                op: "attach to",
                path: file,
                source,
            })?;
        }
        Ok(())
    }

    /// Removes the (empty) cgroup `path` from every hierarchy memext uses. A
    /// cgroup that is already gone is not an error.
    pub fn remove(&self, path: &CgroupPath) -> Result<(), HierarchyError> {
        let mut first_err = None;
        for dir in self.dirs(path) {
            match std::fs::remove_dir(&dir) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => {
                    first_err.get_or_insert(HierarchyError::Io {
                        op: "rmdir",
                        path: dir,
                        source,
                    });
                }
            }
        }
        first_err.map_or(Ok(()), Err)
    }
}

/// Creates cgroup directory `dir`; one already there is not an error.
pub(crate) fn make_dir(dir: &Path) -> std::io::Result<()> {
    match std::fs::create_dir(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        r => r,
    }
}

fn enable_controllers(dir: &Path) -> Result<(), HierarchyError> {
    let control = dir.join("cgroup.subtree_control");
    let enabled = std::fs::read_to_string(&control).unwrap_or_default();
    let available = std::fs::read_to_string(dir.join("cgroup.controllers")).unwrap_or_default();
    for c in ["memory", "cpu"] {
        let has = |s: &str| s.split_whitespace().any(|w| w == c);
        if !has(&enabled) && has(&available) {
            std::fs::write(&control, format!("+{c}")).map_err(|source| HierarchyError::Io {
                op: "enable controllers in",
                path: control.clone(),
                source,
            })?;
        }
    }
    Ok(())
}

fn walk_dir(dir: &Path, at: &CgroupPath, out: &mut Vec<CgroupPath>) -> std::io::Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    let mut children: Vec<(String, PathBuf)> = Vec::new();
    for entry in entries {
        let Ok(entry) = entry else { continue };
        // file_type() does not follow symlinks: a planted symlink is not a cgroup.
        if !entry.file_type().map(|t| t.is_dir()).unwrap_or(false) {
            continue;
        }
        if let Some(name) = entry.file_name().to_str() {
            children.push((name.to_owned(), entry.path()));
        }
    }
    children.sort();
    for (name, path) in children {
        let Ok(child) = at.child(&name) else { continue };
        out.push(child.clone());
        walk_dir(&path, &child, out)?;
    }
    Ok(())
}
