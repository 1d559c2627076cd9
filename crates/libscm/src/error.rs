//! What can go wrong with a region, and the fixed result codes the C ABI returns.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum RegionError {
    #[error("invalid argument: {what}")]
    Invalid { what: String },
    #[error("region of {size} bytes is too small (at least {min})")]
    TooSmall { size: u64, min: u64 },
    #[error("region is full: no free block of {need} bytes")]
    Full { need: u64 },
    #[error("region is corrupt: {what}")]
    Corrupt { what: String },
    #[error("not a libscm region (magic {magic:#x})")]
    NotARegion { magic: u64 },
    #[error("region format version {found}, this library reads {expected}")]
    Version { found: u64, expected: u64 },
    #[error("{op} {path}")]
    Path {
        op: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{op} on the region file")]
    Io {
        op: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("pmem broker at {socket}: {what}")]
    Broker { socket: PathBuf, what: String },
    #[error("pmem broker at {socket} refused: {reason}")]
    Refused { socket: PathBuf, reason: String },
    #[error("transaction: {what}")]
    Tx { what: &'static str },
    #[error("no default region: call scm_set_default or set SCM_REGION")]
    NoDefault,
    #[error("the undo log is full ({cap} bytes); add less per transaction")]
    UndoFull { cap: u64 },
}

/// The result of every exported function. The values are part of the ABI; the
/// variant names are the C names.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScmResult {
    SCM_OK = 0,
    /// A bad argument: null or foreign pointer, zero size, bad name.
    SCM_EINVAL = 1,
    /// No free block is large enough.
    SCM_ENOMEM = 2,
    /// The region file could not be opened, mapped, sized or synced.
    SCM_EIO = 3,
    /// The region's contents are inconsistent, or it is not a region at all.
    SCM_ECORRUPT = 4,
    /// The broker could not be reached or answered nonsense.
    SCM_EBROKER = 5,
    /// The broker refused the request (quota, identity, name).
    SCM_EREFUSED = 6,
    /// A transaction call out of order (commit without begin, nested begin).
    SCM_ETX = 7,
    /// No default region is open and none is configured (SCM_REGION).
    SCM_ENODEFAULT = 8,
    /// A panic inside the library was caught at the boundary.
    SCM_EPANIC = 99,
}

impl From<&RegionError> for ScmResult {
    fn from(e: &RegionError) -> Self {
        match e {
            RegionError::Invalid { .. } | RegionError::TooSmall { .. } => ScmResult::SCM_EINVAL,
            RegionError::Full { .. } | RegionError::UndoFull { .. } => ScmResult::SCM_ENOMEM,
            RegionError::Corrupt { .. }
            | RegionError::NotARegion { .. }
            | RegionError::Version { .. } => ScmResult::SCM_ECORRUPT,
            RegionError::Path { .. } | RegionError::Io { .. } => ScmResult::SCM_EIO,
            RegionError::Broker { .. } => ScmResult::SCM_EBROKER,
            RegionError::Refused { .. } => ScmResult::SCM_EREFUSED,
            RegionError::Tx { .. } => ScmResult::SCM_ETX,
            RegionError::NoDefault => ScmResult::SCM_ENODEFAULT,
        }
    }
}

pub fn invalid(what: impl Into<String>) -> RegionError {
    RegionError::Invalid { what: what.into() }
}
