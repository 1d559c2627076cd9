//! The pmem broker's parameters: where regions live, what they are filed
//! under, the quotas; their defaults and checks.

use std::path::PathBuf;

use serde::Deserialize;

use crate::units::ByteSize;

/// What a container's persistent regions are filed under.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub enum RegionKey {
    /// The container id: a new container starts with no regions.
    Id,
    /// The container's name: a re-created container of the same name gets its regions back.
    Name,
    /// The value of this container label.
    Label(String),
}

impl TryFrom<String> for RegionKey {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        match s.as_str() {
            "id" => Ok(RegionKey::Id),
            "name" => Ok(RegionKey::Name),
            _ => match s.strip_prefix("label:") {
                Some(l) if !l.is_empty() => Ok(RegionKey::Label(l.to_owned())),
                _ => Err(format!(
                    "pmem.key must be \"id\", \"name\" or \"label:KEY\", not {s:?}"
                )),
            },
        }
    }
}

/// The pmem broker (`memext pmem-broker`, or inside the daemon).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PmemConfig {
    /// Also run the broker inside `memext daemon`.
    #[serde(default)]
    pub in_daemon: bool,
    /// Directory holding one sub-directory of region files per container.
    #[serde(default = "default_pmem_root")]
    pub root: PathBuf,
    /// The broker's socket. Mount its *directory* into containers, so a restarted
    /// broker's new socket is seen there.
    #[serde(default = "default_pmem_socket")]
    pub socket: PathBuf,
    #[serde(default = "default_region_key")]
    pub key: RegionKey,
    /// Most bytes of regions one container may hold.
    #[serde(default = "default_container_quota")]
    pub container_quota: ByteSize,
    /// Most bytes of regions all containers together may hold.
    #[serde(default = "default_total_quota")]
    pub total_quota: ByteSize,
    /// Serve callers that are not in a container (refused by default).
    #[serde(default)]
    pub allow_host: bool,
}

pub(crate) fn default_pmem_root() -> PathBuf {
    PathBuf::from("/var/lib/memext/pmem")
}
pub(crate) fn default_pmem_socket() -> PathBuf {
    PathBuf::from(scm::protocol::DEFAULT_SOCKET)
}
pub(crate) fn default_region_key() -> RegionKey {
    RegionKey::Id
}
pub(crate) fn default_container_quota() -> ByteSize {
    ByteSize(4 << 30)
}
pub(crate) fn default_total_quota() -> ByteSize {
    ByteSize(64 << 30)
}

impl Default for PmemConfig {
    fn default() -> Self {
        Self {
            in_daemon: false,
            root: default_pmem_root(),
            socket: default_pmem_socket(),
            key: default_region_key(),
            container_quota: default_container_quota(),
            total_quota: default_total_quota(),
            allow_host: false,
        }
    }
}

pub(crate) fn validate_pmem(p: &PmemConfig) -> Option<String> {
    if !p.root.is_absolute() || !p.socket.is_absolute() {
        return Some("pmem.root and pmem.socket must be absolute paths".into());
    }
    if p.socket.starts_with(&p.root) {
        return Some("pmem.socket must not lie under pmem.root".into());
    }
    if p.container_quota.0 == 0 || p.container_quota.0 > p.total_quota.0 {
        return Some(
            "pmem.container_quota must be more than 0 and at most pmem.total_quota".into(),
        );
    }
    None
}
