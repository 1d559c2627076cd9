//! The policy file (TOML): which cgroups are memory contexts and of what
//! class, the parameters of each class, where runtimes keep their metadata,
//! and the memory tiers. Loading validates everything and names the line of
//! each problem; it never touches the system.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use globset::{GlobBuilder, GlobMatcher};
use memext_cgroup::CgroupPath;
use serde::Deserialize;
use toml::Spanned;

use crate::identity::{Identity, Runtime};
use crate::units::{ByteSize, Percent};

pub const DEFAULT_PATH: &str = "/etc/memext/memext.toml";

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}:{column}: {message}")]
    Syntax {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{path}:{line}: {message}")]
    Invalid {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

/// How memext treats a memory context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    /// Protected: gets its working set plus headroom first, never pushed out.
    Critical,
    /// Managed: its DRAM share follows its activity.
    Extend,
    /// Left alone: never written.
    Ignore,
}

impl std::fmt::Display for Class {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Class::Critical => "critical",
            Class::Extend => "extend",
            Class::Ignore => "ignore",
        })
    }
}

/// A glob over cgroup paths; `*` stays within one component, `**` crosses them.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "String")]
pub struct CgroupGlob {
    pub text: String,
    matcher: GlobMatcher,
}

impl TryFrom<String> for CgroupGlob {
    type Error = String;
    fn try_from(text: String) -> Result<Self, String> {
        if !text.starts_with('/') {
            return Err(format!(
                "cgroup pattern {text:?} can never match: cgroup paths start with /"
            ));
        }
        if text.split('/').any(|c| c == "..") {
            return Err(format!(
                "cgroup pattern {text:?} can never match: cgroup paths have no `..`"
            ));
        }
        let glob = GlobBuilder::new(&text)
            .literal_separator(true)
            .build()
            .map_err(|e| format!("cgroup pattern {text:?} is not a valid glob: {}", e.kind()))?;
        Ok(Self {
            matcher: glob.compile_matcher(),
            text,
        })
    }
}

/// A glob over container or unit names.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "String")]
pub struct NameGlob {
    pub text: String,
    matcher: GlobMatcher,
}

impl TryFrom<String> for NameGlob {
    type Error = String;
    fn try_from(text: String) -> Result<Self, String> {
        if text.is_empty() || text.contains('/') {
            return Err(format!(
                "name pattern {text:?} can never match: names are non-empty and have no /"
            ));
        }
        let glob = GlobBuilder::new(&text)
            .build()
            .map_err(|e| format!("name pattern {text:?} is not a valid glob: {}", e.kind()))?;
        Ok(Self {
            matcher: glob.compile_matcher(),
            text,
        })
    }
}

/// A container id or a prefix of one (lowercase hex, 1 to 64 digits).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct IdPrefix(pub String);

impl TryFrom<String> for IdPrefix {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        if s.is_empty()
            || s.len() > 64
            || !s
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            return Err(format!(
                "id {s:?} can never match: container ids are 1 to 64 lowercase hex digits"
            ));
        }
        Ok(IdPrefix(s))
    }
}

/// A duration written as `30s`, `5m`, `1h 30m`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct HumanDuration(pub Duration);

impl TryFrom<String> for HumanDuration {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        humantime::parse_duration(&s)
            .map(HumanDuration)
            .map_err(|e| format!("{s:?} is not a duration (like 30s or 5m): {e}"))
    }
}

/// One `[[select]]` entry; every field given must match. First match wins.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Selector {
    pub cgroup: Option<CgroupGlob>,
    pub runtime: Option<Runtime>,
    pub name: Option<NameGlob>,
    pub id: Option<IdPrefix>,
    pub class: Class,
}

/// What a selector is matched against.
#[derive(Debug, Clone, Copy)]
pub struct ContextFacts<'a> {
    pub path: &'a CgroupPath,
    pub identity: &'a Identity,
    pub name: Option<&'a str>,
}

impl Selector {
    pub fn matches(&self, c: &ContextFacts<'_>) -> bool {
        self.cgroup
            .as_ref()
            .is_none_or(|g| g.matcher.is_match(c.path.as_str()))
            && self.runtime.is_none_or(|r| r == c.identity.runtime)
            && self
                .name
                .as_ref()
                .is_none_or(|g| c.name.is_some_and(|n| g.matcher.is_match(n)))
            && self.id.as_ref().is_none_or(|p| {
                c.identity.runtime.is_container() && c.identity.id.starts_with(&p.0)
            })
    }

    /// The selector as one line, e.g. `cgroup=/docker/* name=redis* → critical`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(g) = &self.cgroup {
            parts.push(format!("cgroup={}", g.text));
        }
        if let Some(r) = self.runtime {
            parts.push(format!("runtime={r}"));
        }
        if let Some(g) = &self.name {
            parts.push(format!("name={}", g.text));
        }
        if let Some(i) = &self.id {
            parts.push(format!("id={}", i.0));
        }
        format!("{} -> {}", parts.join(" "), self.class)
    }

    /// Why this selector can never match anything, if so.
    fn never_matches(&self) -> Option<String> {
        if self.cgroup.is_none()
            && self.runtime.is_none()
            && self.name.is_none()
            && self.id.is_none()
        {
            return Some("a selector needs at least one of cgroup, runtime, name, id (cgroup = \"/**\" selects every cgroup)".into());
        }
        match self.runtime {
            Some(r) if !r.is_container() && self.id.is_some() => Some(format!(
                "selector can never match: {r} cgroups have no container id"
            )),
            Some(Runtime::Plain) if self.name.is_some() => Some(
                "selector can never match: plain cgroups have no name; select them by cgroup"
                    .into(),
            ),
            _ => None,
        }
    }
}

/// Parameters of a class, as the file gives them (all optional).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ClassOverrides {
    idle_after: Option<HumanDuration>,
    floor: Option<ByteSize>,
    headroom: Option<Percent>,
    pageout_bandwidth: Option<ByteSize>,
    prefetch_bandwidth: Option<ByteSize>,
    map_back: Option<bool>,
}

/// Parameters of a class, resolved against the defaults.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ClassParams {
    /// A context with no activity for this long is idle.
    pub idle_after: Duration,
    /// An idle context is never pushed below this many resident bytes.
    pub floor: ByteSize,
    /// Room above the working set kept for a context, in percent of it.
    pub headroom: Percent,
    /// Page-out bandwidth cap, bytes per second.
    pub pageout_bandwidth: ByteSize,
    /// Prefetch (bring-back) bandwidth cap, bytes per second.
    pub prefetch_bandwidth: ByteSize,
    /// Before a predicted periodic wake, also map the brought-back working set
    /// (MADV_COLLAPSE: whole 2 MiB blocks as huge pages), so that the wake
    /// takes no page faults at all. Pages mapped this way no longer tell
    /// whether the context touched them: prefetch accuracy leaves them out.
    pub map_back: bool,
}

impl ClassOverrides {
    fn resolve(&self, d: ClassParams) -> ClassParams {
        ClassParams {
            idle_after: self.idle_after.map_or(d.idle_after, |h| h.0),
            floor: self.floor.unwrap_or(d.floor),
            headroom: self.headroom.unwrap_or(d.headroom),
            pageout_bandwidth: self.pageout_bandwidth.unwrap_or(d.pageout_bandwidth),
            prefetch_bandwidth: self.prefetch_bandwidth.unwrap_or(d.prefetch_bandwidth),
            map_back: self.map_back.unwrap_or(d.map_back),
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ClassTable {
    #[serde(default)]
    critical: ClassOverrides,
    #[serde(default)]
    extend: ClassOverrides,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    #[serde(default = "default_cgroup_root")]
    pub cgroup_root: PathBuf,
    #[serde(default = "default_state_dir")]
    pub state_dir: PathBuf,
}

fn default_cgroup_root() -> PathBuf {
    PathBuf::from(memext_cgroup::Hierarchy::DEFAULT_ROOT)
}
fn default_state_dir() -> PathBuf {
    PathBuf::from("/var/lib/memext")
}

impl Default for HostConfig {
    fn default() -> Self {
        Self {
            cgroup_root: default_cgroup_root(),
            state_dir: default_state_dir(),
        }
    }
}

/// Where container runtimes keep the metadata memext reads names from.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuntimePaths {
    #[serde(default = "default_docker_roots")]
    pub docker_roots: Vec<PathBuf>,
    #[serde(default = "default_podman_roots")]
    pub podman_roots: Vec<PathBuf>,
}

fn default_docker_roots() -> Vec<PathBuf> {
    vec![PathBuf::from("/var/lib/docker")]
}
fn default_podman_roots() -> Vec<PathBuf> {
    vec![PathBuf::from("/var/lib/containers/storage")]
}

impl Default for RuntimePaths {
    fn default() -> Self {
        Self {
            docker_roots: default_docker_roots(),
            podman_roots: default_podman_roots(),
        }
    }
}

/// A compressed-RAM swap device.
#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ZramConfig {
    pub size: ByteSize,
    #[serde(default = "default_zram_algorithm")]
    pub algorithm: String,
    #[serde(default = "default_zram_priority")]
    pub priority: i32,
    /// Host DRAM the compressed pool may take (zram's `mem_limit`); none: unbounded.
    #[serde(default)]
    pub mem_limit: Option<ByteSize>,
}
fn default_zram_algorithm() -> String {
    "lz4".into()
}
fn default_zram_priority() -> i32 {
    100
}

/// zswap: a compressed cache in front of the swap devices.
#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ZswapConfig {
    #[serde(default = "default_zswap_compressor")]
    pub compressor: String,
    #[serde(default = "default_pool_percent")]
    pub max_pool_percent: u8,
}
/// lzo-rle is built into every kernel with zswap; lz4 often is a module.
fn default_zswap_compressor() -> String {
    "lzo-rle".into()
}
fn default_pool_percent() -> u8 {
    20
}

/// A swap file on flash.
#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct SwapFileConfig {
    pub path: PathBuf,
    pub size: ByteSize,
    #[serde(default = "default_swapfile_priority")]
    pub priority: i32,
}
fn default_swapfile_priority() -> i32 {
    50
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct TiersConfig {
    pub zram: Option<ZramConfig>,
    pub zswap: Option<ZswapConfig>,
    #[serde(default)]
    pub swapfile: Vec<SwapFileConfig>,
}

/// The daemon's own settings.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DaemonConfig {
    /// DRAM the selected contexts may use together, as a size.
    pub capacity: Option<ByteSize>,
    /// Or: the memory limit of this cgroup (e.g. a parent of all contexts).
    pub capacity_cgroup: Option<String>,
    /// Or (the default): the host's DRAM less this reserve.
    #[serde(default = "default_reserve")]
    pub reserve: ByteSize,
    /// Full observe → plan → act cycle.
    #[serde(default = "default_tick")]
    pub tick: HumanDuration,
    /// How often idle contexts' CPU counters are polled to catch a wake.
    #[serde(default = "default_poll")]
    pub poll: HumanDuration,
    /// How often an active context's working set is snapshotted.
    #[serde(default = "default_ws_interval")]
    pub ws_interval: HumanDuration,
    /// Bring a periodic context back this long before its predicted wake.
    #[serde(default = "default_lead")]
    pub prefetch_lead: HumanDuration,
    /// Prefetch accuracy: pages brought back and touched within this long.
    #[serde(default = "default_accuracy_window")]
    pub accuracy_window: HumanDuration,
    /// The control socket `memext status` talks to.
    #[serde(default = "default_socket")]
    pub socket: PathBuf,
}

fn default_reserve() -> ByteSize {
    ByteSize(2 << 30)
}
fn default_tick() -> HumanDuration {
    HumanDuration(Duration::from_secs(1))
}
fn default_poll() -> HumanDuration {
    HumanDuration(Duration::from_millis(20))
}
fn default_ws_interval() -> HumanDuration {
    HumanDuration(Duration::from_secs(10))
}
fn default_lead() -> HumanDuration {
    HumanDuration(Duration::from_secs(3))
}
fn default_accuracy_window() -> HumanDuration {
    HumanDuration(Duration::from_secs(10))
}
fn default_socket() -> PathBuf {
    PathBuf::from("/run/memext.sock")
}

impl Default for DaemonConfig {
    fn default() -> Self {
        Self {
            capacity: None,
            capacity_cgroup: None,
            reserve: default_reserve(),
            tick: default_tick(),
            poll: default_poll(),
            ws_interval: default_ws_interval(),
            prefetch_lead: default_lead(),
            accuracy_window: default_accuracy_window(),
            socket: default_socket(),
        }
    }
}

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

fn default_pmem_root() -> PathBuf {
    PathBuf::from("/var/lib/memext/pmem")
}
fn default_pmem_socket() -> PathBuf {
    PathBuf::from(scm::protocol::DEFAULT_SOCKET)
}
fn default_region_key() -> RegionKey {
    RegionKey::Id
}
fn default_container_quota() -> ByteSize {
    ByteSize(4 << 30)
}
fn default_total_quota() -> ByteSize {
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

fn validate_pmem(p: &PmemConfig) -> Option<String> {
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

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    host: HostConfig,
    #[serde(default)]
    select: Vec<Spanned<Selector>>,
    #[serde(default)]
    class: ClassTable,
    #[serde(default)]
    runtimes: RuntimePaths,
    #[serde(default)]
    tiers: TiersConfig,
    #[serde(default)]
    daemon: DaemonConfig,
    #[serde(default)]
    pmem: PmemConfig,
}

/// The validated policy.
#[derive(Debug, Clone)]
pub struct Config {
    pub source: PathBuf,
    pub host: HostConfig,
    pub selectors: Vec<Selector>,
    pub critical: ClassParams,
    pub extend: ClassParams,
    pub runtimes: RuntimePaths,
    pub tiers: TiersConfig,
    pub daemon: DaemonConfig,
    pub pmem: PmemConfig,
}

impl Config {
    pub fn critical_defaults() -> ClassParams {
        ClassParams {
            idle_after: Duration::from_secs(30),
            floor: ByteSize(0),
            headroom: Percent(10),
            pageout_bandwidth: ByteSize(256 << 20),
            prefetch_bandwidth: ByteSize(512 << 20),
            map_back: true,
        }
    }

    pub fn extend_defaults() -> ClassParams {
        ClassParams {
            idle_after: Duration::from_secs(30),
            floor: ByteSize(32 << 20),
            headroom: Percent(0),
            pageout_bandwidth: ByteSize(256 << 20),
            prefetch_bandwidth: ByteSize(512 << 20),
            map_back: true,
        }
    }

    /// The policy used when no file exists: nothing selected, defaults everywhere.
    pub fn empty(source: &Path) -> Self {
        Self {
            source: source.into(),
            host: HostConfig::default(),
            selectors: Vec::new(),
            critical: Self::critical_defaults(),
            extend: Self::extend_defaults(),
            runtimes: RuntimePaths::default(),
            tiers: TiersConfig::default(),
            daemon: DaemonConfig::default(),
            pmem: PmemConfig::default(),
        }
    }

    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.into(),
            source,
        })?;
        Self::parse(&text, path)
    }

    /// Parses and validates `text`; `path` is only used in messages.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ConfigError> {
        let file: ConfigFile = toml::from_str(text).map_err(|e| {
            let (line, column) = e.span().map_or((1, 1), |s| line_col(text, s.start));
            ConfigError::Syntax {
                path: path.into(),
                line,
                column,
                message: e.message().trim().to_owned(),
            }
        })?;
        let invalid = |span: Range<usize>, message: String| ConfigError::Invalid {
            path: path.into(),
            line: line_col(text, span.start).0,
            message,
        };
        for s in &file.select {
            if let Some(why) = s.get_ref().never_matches() {
                return Err(invalid(s.span(), why));
            }
        }
        if let Some(why) = validate_tiers(&file.tiers) {
            // toml cannot span a table built from dotted headers; point at the
            // first [tiers…] header instead.
            let at = text
                .find("[tiers")
                .or_else(|| text.find("tiers"))
                .unwrap_or(0);
            return Err(invalid(at..at, why));
        }
        if let Some(why) = validate_daemon(&file.daemon) {
            let at = text.find("[daemon]").unwrap_or(0);
            return Err(invalid(at..at, why));
        }
        if let Some(why) = validate_pmem(&file.pmem) {
            let at = text.find("[pmem]").unwrap_or(0);
            return Err(invalid(at..at, why));
        }
        Ok(Self {
            daemon: file.daemon,
            pmem: file.pmem,
            source: path.into(),
            host: file.host,
            selectors: file.select.into_iter().map(Spanned::into_inner).collect(),
            critical: file.class.critical.resolve(Self::critical_defaults()),
            extend: file.class.extend.resolve(Self::extend_defaults()),
            runtimes: file.runtimes,
            tiers: file.tiers,
        })
    }

    /// The class of a context, and the index of the selector that gave it.
    pub fn classify(&self, c: &ContextFacts<'_>) -> (Class, Option<usize>) {
        self.selectors
            .iter()
            .position(|s| s.matches(c))
            .map_or((Class::Ignore, None), |i| {
                (self.selectors[i].class, Some(i))
            })
    }

    pub fn params(&self, class: Class) -> Option<&ClassParams> {
        match class {
            Class::Critical => Some(&self.critical),
            Class::Extend => Some(&self.extend),
            Class::Ignore => None,
        }
    }
}

fn validate_daemon(d: &DaemonConfig) -> Option<String> {
    if d.capacity.is_some() && d.capacity_cgroup.is_some() {
        return Some("daemon: give capacity or capacity_cgroup, not both".into());
    }
    if let Some(c) = &d.capacity_cgroup {
        if let Err(e) = CgroupPath::parse(c) {
            return Some(format!("daemon.capacity_cgroup: {e}"));
        }
    }
    if d.poll.0.is_zero() || d.tick.0 < d.poll.0 {
        return Some("daemon: poll must be more than 0 and no longer than tick".into());
    }
    if !d.socket.is_absolute() {
        return Some(format!(
            "daemon.socket {} must be absolute",
            d.socket.display()
        ));
    }
    None
}

fn validate_tiers(t: &TiersConfig) -> Option<String> {
    let prio_ok = |p: i32| (0..=32767).contains(&p);
    if let Some(z) = &t.zram {
        if z.size.0 == 0 {
            return Some("tiers.zram.size must be more than 0".into());
        }
        if !prio_ok(z.priority) {
            return Some(format!(
                "tiers.zram.priority {} is outside 0..=32767",
                z.priority
            ));
        }
        if z.mem_limit.is_some_and(|l| l.0 == 0) {
            return Some(
                "tiers.zram.mem_limit must be more than 0 (leave it out for no limit)".into(),
            );
        }
        if t.zswap.is_some() {
            return Some("tiers.zswap in front of tiers.zram compresses every page twice; configure one of them".into());
        }
    }
    if let Some(z) = &t.zswap {
        if z.max_pool_percent == 0 || z.max_pool_percent > 100 {
            return Some(format!(
                "tiers.zswap.max_pool_percent {} is outside 1..=100",
                z.max_pool_percent
            ));
        }
    }
    for f in &t.swapfile {
        if !f.path.is_absolute() {
            return Some(format!(
                "tiers.swapfile path {} must be absolute",
                f.path.display()
            ));
        }
        if f.size.0 < 1 << 20 {
            return Some(format!(
                "tiers.swapfile {} size {} is below the 1MiB minimum",
                f.path.display(),
                f.size
            ));
        }
        if !prio_ok(f.priority) {
            return Some(format!(
                "tiers.swapfile {} priority {} is outside 0..=32767",
                f.path.display(),
                f.priority
            ));
        }
    }
    let mut paths: Vec<&Path> = t.swapfile.iter().map(|f| f.path.as_path()).collect();
    paths.sort();
    if let Some(w) = paths.windows(2).find(|w| w[0] == w[1]) {
        return Some(format!("tiers.swapfile {} is listed twice", w[0].display()));
    }
    None
}

/// 1-based line and column of byte offset `at` in `text`.
fn line_col(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: &str = "3f2a3f2a3f2a3f2a3f2a3f2a3f2a3f2a3f2a3f2a3f2a3f2a3f2a3f2a3f2a3f2a";

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(text, Path::new("memext.toml"))
    }

    fn err_line(text: &str) -> (usize, String) {
        match parse(text) {
            Err(ConfigError::Syntax { line, message, .. })
            | Err(ConfigError::Invalid { line, message, .. }) => (line, message),
            other => panic!("expected an error, got {other:?}"),
        }
    }

    const FULL: &str = r#"
[host]
state_dir = "/var/lib/memext"

[[select]]
name = "redis*"
class = "critical"

[[select]]
cgroup = "/memext-demo/*"
class = "extend"

[[select]]
runtime = "docker"
class = "extend"

[class.extend]
idle_after = "10s"
floor = "64MiB"

[runtimes]
docker_roots = ["/var/lib/docker", "/srv/docker"]

[tiers.zram]
size = "4G"
algorithm = "lz4"
mem_limit = "1GiB"

[[tiers.swapfile]]
path = "/var/lib/memext/swap0"
size = "16GiB"
priority = 50
"#;

    #[test]
    fn parses_a_full_policy() {
        let c = parse(FULL).expect("valid");
        assert_eq!(c.selectors.len(), 3);
        assert_eq!(c.extend.idle_after, Duration::from_secs(10));
        assert_eq!(c.extend.floor, ByteSize(64 << 20));
        assert_eq!(
            c.extend.prefetch_bandwidth,
            Config::extend_defaults().prefetch_bandwidth
        );
        assert_eq!(c.critical, Config::critical_defaults());
        assert_eq!(
            c.tiers.zram.as_ref().map(|z| (z.size, z.mem_limit)),
            Some((ByteSize(4 << 30), Some(ByteSize(1 << 30))))
        );
        assert_eq!(c.tiers.swapfile[0].priority, 50);
        assert_eq!(c.runtimes.docker_roots.len(), 2);
    }

    #[test]
    fn first_matching_selector_wins() {
        let c = parse(FULL).expect("valid");
        let docker = Identity {
            runtime: Runtime::Docker,
            id: H.into(),
            pod: None,
        };
        let path = CgroupPath::parse(&format!("/docker/{H}")).expect("path");
        let redis = ContextFacts {
            path: &path,
            identity: &docker,
            name: Some("redis-1"),
        };
        assert_eq!(c.classify(&redis), (Class::Critical, Some(0)));
        let noise = ContextFacts {
            name: Some("noise-3"),
            ..redis
        };
        assert_eq!(c.classify(&noise), (Class::Extend, Some(2)));
        let plain = Identity {
            runtime: Runtime::Plain,
            id: "/memext-demo/busy".into(),
            pod: None,
        };
        let p2 = CgroupPath::parse("/memext-demo/busy").expect("path");
        assert_eq!(
            c.classify(&ContextFacts {
                path: &p2,
                identity: &plain,
                name: None
            }),
            (Class::Extend, Some(1))
        );
        let p3 = CgroupPath::parse("/memext-demo/a/b").expect("path");
        assert_eq!(
            c.classify(&ContextFacts {
                path: &p3,
                identity: &plain,
                name: None
            }),
            (Class::Ignore, None)
        );
    }

    #[test]
    fn id_prefix_matches_containers_only() {
        let c = parse("[[select]]\nid = \"3f2a3f\"\nclass = \"critical\"\n").expect("valid");
        let path = CgroupPath::parse(&format!("/docker/{H}")).expect("path");
        let docker = Identity {
            runtime: Runtime::Docker,
            id: H.into(),
            pod: None,
        };
        assert_eq!(
            c.classify(&ContextFacts {
                path: &path,
                identity: &docker,
                name: None
            })
            .0,
            Class::Critical
        );
    }

    #[test]
    fn unknown_key_names_its_line() {
        let (line, msg) = err_line("[[select]]\ncgroup = \"/a\"\nclas = \"extend\"\n");
        assert_eq!(line, 3, "{msg}");
        assert!(msg.contains("clas"), "{msg}");
        let (line, msg) = err_line("\n\n[class.extend]\nidle = \"3s\"\n");
        assert_eq!(line, 4, "{msg}");
    }

    #[test]
    fn pmem_section_parses_keys_and_refuses_unsafe_paths() {
        let c = Config::parse(
            "[pmem]\nkey = \"label:app\"\ncontainer_quota = \"1G\"\n",
            Path::new("m.toml"),
        )
        .expect("valid");
        assert_eq!(c.pmem.key, RegionKey::Label("app".into()));
        assert_eq!(c.pmem.container_quota.0, 1 << 30);
        assert!(!c.pmem.allow_host, "host callers are refused by default");
        for bad in [
            "[pmem]\nkey = \"label:\"\n",
            "[pmem]\nkey = \"uid\"\n",
            "[pmem]\nroot = \"relative\"\n",
            "[pmem]\nroot = \"/r\"\nsocket = \"/r/s.sock\"\n",
            "[pmem]\ncontainer_quota = \"2G\"\ntotal_quota = \"1G\"\n",
        ] {
            assert!(Config::parse(bad, Path::new("m.toml")).is_err(), "{bad}");
        }
    }

    #[test]
    fn bad_size_names_its_line() {
        let (line, msg) = err_line("[class.extend]\nidle_after = \"5s\"\nfloor = \"12 parsecs\"\n");
        assert_eq!(line, 3);
        assert!(msg.contains("not a size"), "{msg}");
    }

    #[test]
    fn selectors_that_can_never_match() {
        for (text, want) in [
            (
                "[[select]]\ncgroup = \"docker/*\"\nclass = \"extend\"\n",
                "start with /",
            ),
            (
                "[[select]]\ncgroup = \"/a/../b\"\nclass = \"extend\"\n",
                "..",
            ),
            (
                "[[select]]\nid = \"XYZ\"\nclass = \"extend\"\n",
                "lowercase hex",
            ),
            (
                "[[select]]\nruntime = \"dokcer\"\nclass = \"extend\"\n",
                "unknown variant",
            ),
            (
                "[[select]]\nname = \"a/b\"\nclass = \"extend\"\n",
                "never match",
            ),
            (
                "[[select]]\nruntime = \"systemd\"\nid = \"ab\"\nclass = \"extend\"\n",
                "no container id",
            ),
            (
                "[[select]]\nruntime = \"plain\"\nname = \"x\"\nclass = \"extend\"\n",
                "no name",
            ),
            ("[[select]]\nclass = \"extend\"\n", "at least one"),
            (
                "[[select]]\ncgroup = \"/a/[\"\nclass = \"extend\"\n",
                "not a valid glob",
            ),
        ] {
            let (line, msg) = err_line(text);
            assert!(msg.contains(want), "{text}: {msg}");
            assert!(line <= 3, "{text}: line {line}");
        }
    }

    #[test]
    fn daemon_section() {
        let c = parse("[daemon]\ncapacity = \"8GiB\"\npoll = \"10ms\"\n").expect("valid");
        assert_eq!(c.daemon.capacity, Some(ByteSize(8 << 30)));
        assert_eq!(c.daemon.poll.0, Duration::from_millis(10));
        assert_eq!(c.daemon.tick.0, Duration::from_secs(1));
        let both = "[daemon]\ncapacity = \"8GiB\"\ncapacity_cgroup = \"/bench\"\n";
        assert!(err_line(both).1.contains("not both"));
        assert!(err_line("[daemon]\ncapacity_cgroup = \"bench\"\n")
            .1
            .contains("absolute"));
        assert!(err_line("[daemon]\npoll = \"2s\"\ntick = \"1s\"\n")
            .1
            .contains("poll"));
    }

    #[test]
    fn tier_mistakes() {
        let both = "[tiers.zram]\nsize = \"1G\"\n[tiers.zswap]\ncompressor = \"lz4\"\n";
        assert!(err_line(both).1.contains("twice"));
        let rel = "[[tiers.swapfile]]\npath = \"swap0\"\nsize = \"1G\"\n";
        assert!(err_line(rel).1.contains("absolute"));
        let dup = "[[tiers.swapfile]]\npath = \"/s\"\nsize = \"1G\"\n[[tiers.swapfile]]\npath = \"/s\"\nsize = \"1G\"\n";
        assert!(err_line(dup).1.contains("twice"));
        let prio = "[tiers.zram]\nsize = \"1G\"\npriority = 99999\n";
        assert!(err_line(prio).1.contains("priority"));
        let no_room = "[tiers.zram]\nsize = \"1G\"\nmem_limit = \"0\"\n";
        assert!(err_line(no_room).1.contains("mem_limit"));
    }

    #[test]
    fn error_message_has_file_and_line() {
        let e =
            parse("[[select]]\nclass = \"sometimes\"\ncgroup = \"/a\"\n").expect_err("bad class");
        let s = e.to_string();
        assert!(s.starts_with("memext.toml:2:"), "{s}");
    }
}
