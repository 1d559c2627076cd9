//! [`CgroupPath`]: a cgroup's path inside its hierarchy, validated so that it can
//! never leave the hierarchy it is joined to.

use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("cgroup path {path:?} must be absolute (start with /)")]
    NotAbsolute { path: String },
    #[error("cgroup path {path:?} has a `.`, `..` or empty component")]
    BadComponent { path: String },
    #[error("cgroup path {path:?} contains a NUL byte")]
    Nul { path: String },
}

/// A cgroup path such as `/docker/3f2a…`, relative to the hierarchy's root.
/// `/` is the root cgroup.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct CgroupPath(String);

impl CgroupPath {
    pub fn root() -> Self {
        CgroupPath("/".into())
    }

    pub fn parse(s: &str) -> Result<Self, PathError> {
        if !s.starts_with('/') {
            return Err(PathError::NotAbsolute { path: s.into() });
        }
        if s.contains('\0') {
            return Err(PathError::Nul { path: s.into() });
        }
        let trimmed = s.trim_end_matches('/');
        if trimmed.is_empty() {
            return Ok(Self::root());
        }
        if trimmed[1..]
            .split('/')
            .any(|c| c.is_empty() || c == "." || c == "..")
        {
            return Err(PathError::BadComponent { path: s.into() });
        }
        Ok(CgroupPath(trimmed.into()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn is_root(&self) -> bool {
        self.0 == "/"
    }

    /// Components from the top, e.g. `["docker", "3f2a…"]`.
    pub fn components(&self) -> impl Iterator<Item = &str> {
        self.0.split('/').filter(|c| !c.is_empty())
    }

    pub fn name(&self) -> &str {
        self.components().last().unwrap_or("/")
    }

    pub fn parent(&self) -> Option<CgroupPath> {
        if self.is_root() {
            return None;
        }
        let i = self.0.rfind('/').unwrap_or(0);
        Some(if i == 0 {
            Self::root()
        } else {
            CgroupPath(self.0[..i].into())
        })
    }

    /// The child `name` of this cgroup; `name` must be one component.
    pub fn child(&self, name: &str) -> Result<CgroupPath, PathError> {
        let base = if self.is_root() { "" } else { self.as_str() };
        CgroupPath::parse(&format!("{base}/{name}")).and_then(|p| {
            if name.contains('/') {
                Err(PathError::BadComponent { path: p.0 })
            } else {
                Ok(p)
            }
        })
    }

    /// Whether `self` is `other` or below it.
    pub fn starts_with(&self, other: &CgroupPath) -> bool {
        other.is_root()
            || self
                .0
                .strip_prefix(other.0.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    }

    /// This path below a hierarchy mounted at `root`.
    pub fn under(&self, root: &Path) -> PathBuf {
        let mut p = root.to_path_buf();
        p.extend(self.components());
        p
    }
}

impl std::fmt::Display for CgroupPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_normalises() {
        assert_eq!(CgroupPath::parse("/").expect("root").as_str(), "/");
        assert_eq!(CgroupPath::parse("/a/b/").expect("valid").as_str(), "/a/b");
        assert!(matches!(
            CgroupPath::parse("a/b"),
            Err(PathError::NotAbsolute { .. })
        ));
        assert!(matches!(
            CgroupPath::parse("/a/../b"),
            Err(PathError::BadComponent { .. })
        ));
        assert!(matches!(
            CgroupPath::parse("/a//b"),
            Err(PathError::BadComponent { .. })
        ));
        assert!(matches!(
            CgroupPath::parse("/a/./b"),
            Err(PathError::BadComponent { .. })
        ));
    }

    #[test]
    fn family() {
        let p = CgroupPath::parse("/docker/abc").expect("valid");
        assert_eq!(p.name(), "abc");
        assert_eq!(p.parent().expect("has parent").as_str(), "/docker");
        assert_eq!(
            p.parent().and_then(|q| q.parent()),
            Some(CgroupPath::root())
        );
        assert!(p.starts_with(&CgroupPath::parse("/docker").expect("valid")));
        assert!(!p.starts_with(&CgroupPath::parse("/dock").expect("valid")));
        assert!(p.child("x/y").is_err());
        assert!(p.child("..").is_err());
        assert_eq!(
            p.under(Path::new("/sys/fs/cgroup/memory")),
            PathBuf::from("/sys/fs/cgroup/memory/docker/abc")
        );
    }
}
