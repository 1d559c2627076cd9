//! The policy file (TOML): which cgroups are memory contexts and of what
//! class, the parameters of each class, where runtimes keep their metadata,
//! and the memory tiers. Loading validates everything and names the line of
//! each problem; it never touches the system.

use std::ops::Range;
use std::path::{Path, PathBuf};

use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use crate::units::{ByteSize, Percent};

mod class;
mod params;
mod pmem;
mod select;
mod tiers;

pub use class::*;
pub use params::*;
pub use pmem::*;
pub use select::*;
pub use tiers::*;

pub const DEFAULT_PATH: &str = "/etc/memext/memext.toml";
/// Extend contexts' default CPU weight: the lowest there is (a hundredth of
/// the kernel's default), so that the swap-ins and reclaim of waking noise
/// run on what critical contexts leave (bench/peers measured the critical
/// Redis losing its CPU to them, not its memory; at 10, six noise containers
/// together still weighed 60 against the critical one's 100).
pub const EXTEND_CPU_WEIGHT: u16 = 1;
/// How long an extend context that wakes may wait (frozen) for room by
/// default, before it runs with a share of what is left.
pub const EXTEND_ADMIT_WITHIN: Duration = Duration::from_secs(5);

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
            map_kept: false,
            cpu_weight: None,
            wake_cpu_weight: CpuWeight(memext_engine::context::WAKE_CPU_WEIGHT),
            resident_cpu_weight: None,
            cpu_max: None,
            admit_within: Duration::ZERO,
            push_out: PushOutWhen::Idle,
            fast_wakes: false,
            keep_anon: true,
            wakes_at_once: None,
            cpu_idle: false,
            admit_at_peak: false,
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
            map_kept: false,
            cpu_weight: Some(CpuWeight(EXTEND_CPU_WEIGHT)),
            wake_cpu_weight: CpuWeight(memext_engine::context::WAKE_CPU_WEIGHT),
            resident_cpu_weight: None,
            cpu_max: None,
            admit_within: EXTEND_ADMIT_WITHIN,
            push_out: PushOutWhen::Idle,
            fast_wakes: false,
            keep_anon: false,
            wakes_at_once: None,
            cpu_idle: false,
            admit_at_peak: false,
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
        if file
            .class
            .critical
            .admit_within
            .is_some_and(|d| !d.0.is_zero())
        {
            let at = text.find("[class.critical]").unwrap_or(0);
            let why = "class.critical: admit_within must be 0s: a critical context never waits";
            return Err(invalid(at..at, why.into()));
        }
        if file.class.critical.push_out.is_some() {
            let at = text.find("[class.critical]").unwrap_or(0);
            let why = "class.critical: push_out applies to extend contexts: a critical context is never pushed out";
            return Err(invalid(at..at, why.into()));
        }
        if file.class.critical.fast_wakes.is_some() {
            let at = text.find("[class.critical]").unwrap_or(0);
            let why = "class.critical: fast_wakes applies to extend contexts: a critical context is never pushed out";
            return Err(invalid(at..at, why.into()));
        }
        if file.class.critical.cpu_max.is_some() {
            let at = text.find("[class.critical]").unwrap_or(0);
            let why = "class.critical: cpu_max applies to extend contexts: it bounds what they take from the critical ones";
            return Err(invalid(at..at, why.into()));
        }
        if file.class.critical.wakes_at_once.is_some() {
            let at = text.find("[class.critical]").unwrap_or(0);
            let why = "class.critical: wakes_at_once applies to extend contexts: a critical context never waits";
            return Err(invalid(at..at, why.into()));
        }
        if file.class.critical.cpu_idle.is_some() {
            let at = text.find("[class.critical]").unwrap_or(0);
            let why = "class.critical: cpu_idle applies to extend contexts: it leaves the critical ones the CPU";
            return Err(invalid(at..at, why.into()));
        }
        if file.class.critical.admit_at_peak.is_some() {
            let at = text.find("[class.critical]").unwrap_or(0);
            let why = "class.critical: admit_at_peak applies to extend contexts: a critical context never waits";
            return Err(invalid(at..at, why.into()));
        }
        let extend = &file.class.extend;
        if extend.admit_at_peak == Some(true) && extend.admit_within.is_some_and(|d| d.0.is_zero())
        {
            let at = text.find("[class.extend]").unwrap_or(0);
            let why =
                "class.extend: admit_at_peak needs admit_within above 0s: it is a way of admitting";
            return Err(invalid(at..at, why.into()));
        }
        if file.class.extend.keep_anon.is_some() {
            let at = text.find("[class.extend]").unwrap_or(0);
            let why = "class.extend: keep_anon applies to critical contexts: an extend context's memory is what memext moves to the tiers";
            return Err(invalid(at..at, why.into()));
        }
        if let Some(why) = validate_daemon(&file.daemon) {
            let at = text.find("[daemon]").unwrap_or(0);
            return Err(invalid(at..at, why));
        }
        if let Some(why) = validate_pmem(&file.pmem) {
            let at = text.find("[pmem]").unwrap_or(0);
            return Err(invalid(at..at, why));
        }
        if let Some(why) = validate_host(&file.host) {
            let at = text.find("[host]").unwrap_or(0);
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

/// 1-based line and column of byte offset `at` in `text`.
fn line_col(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, column)
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod tests_settings;
