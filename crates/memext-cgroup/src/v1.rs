//! cgroup v1: the memory controller in its own hierarchy, CPU time from
//! cpuacct, and PSI from the cgroup2 tree where a hybrid host mounts one.

use std::path::Path;
use std::time::Duration;

use crate::dirfd::{CgroupDir, HeldFile};
use crate::parse::{
    parse_cfs_quota_v1, parse_flat_keyed, parse_freezer_state, parse_limit_v1, parse_pressure,
    parse_procs, parse_u64,
};
use crate::{
    CgroupError, CgroupPath, Limit, LimitKnob, MemoryCgroup, MemoryStats, Pressure, Reclaimed,
    Version,
};

#[derive(Debug)]
pub struct V1Cgroup {
    memory: CgroupDir,
    memory_fs: std::path::PathBuf,
    cpuacct: Beside,
    cpu: Beside,
    freezer: Beside,
    psi: Beside,
    /// `cpuacct.usage`, held open.
    cpu_file: HeldFile,
}

/// The same cgroup in another hierarchy (cpuacct, cpu, freezer, the PSI
/// tree), opened when first found: a runtime makes a cgroup in one
/// hierarchy after another, so one memext opens right after the memory
/// hierarchy's may not have its other directories yet.
#[derive(Debug)]
struct Beside {
    fs: Option<std::path::PathBuf>,
    dir: std::sync::OnceLock<CgroupDir>,
}

impl Beside {
    fn new(root: Option<&Path>, path: &CgroupPath) -> Self {
        let b = Self {
            fs: root.map(|r| path.under(r)),
            dir: std::sync::OnceLock::new(),
        };
        b.get(path);
        b
    }

    fn get(&self, path: &CgroupPath) -> Option<&CgroupDir> {
        if let Some(d) = self.dir.get() {
            return Some(d);
        }
        let d = CgroupDir::open(self.fs.as_ref()?, path).ok()?;
        Some(self.dir.get_or_init(|| d))
    }
}

impl V1Cgroup {
    /// Opens `path` in the memory hierarchy at `memory_root`; CPU time, the
    /// CPU weight and PSI come from the same path in `roots` where it exists.
    pub fn open(
        memory_root: &Path,
        roots: V1Roots<'_>,
        path: &CgroupPath,
    ) -> Result<Self, CgroupError> {
        let memory_fs = path.under(memory_root);
        let memory = CgroupDir::open(&memory_fs, path)?;
        Ok(Self {
            memory,
            memory_fs,
            cpuacct: Beside::new(roots.cpuacct, path),
            cpu: Beside::new(roots.cpu, path),
            freezer: Beside::new(roots.freezer, path),
            psi: Beside::new(roots.psi, path),
            cpu_file: HeldFile::default(),
        })
    }

    /// The directory that holds `knob`: the cpu hierarchy's for the CPU
    /// weight, the freezer hierarchy's for the freezer, the memory
    /// hierarchy's for the rest.
    fn dir_of(&self, knob: LimitKnob) -> Result<&CgroupDir, CgroupError> {
        let (dir, what) = match knob {
            LimitKnob::V1CpuShares => (
                &self.cpu,
                "cpu.shares (no v1 cpu hierarchy holds this cgroup)",
            ),
            LimitKnob::V1CfsQuota => (
                &self.cpu,
                "cpu.cfs_quota_us (no v1 cpu hierarchy holds this cgroup)",
            ),
            LimitKnob::V1CpuIdle => (
                &self.cpu,
                "cpu.idle (no v1 cpu hierarchy holds this cgroup)",
            ),
            LimitKnob::V1Freezer => (
                &self.freezer,
                "freezer.state (no v1 freezer hierarchy holds this cgroup)",
            ),
            _ => return Ok(&self.memory),
        };
        dir.get(&self.memory.path)
            .ok_or_else(|| CgroupError::Unsupported {
                path: self.memory.path.clone(),
                knob: what.into(),
                needs: Version::V1,
                have: Version::V1,
            })
    }
}

/// Where the v1 hierarchies besides memory are mounted (each optional).
#[derive(Debug, Clone, Copy, Default)]
pub struct V1Roots<'a> {
    pub cpuacct: Option<&'a Path>,
    pub cpu: Option<&'a Path>,
    pub freezer: Option<&'a Path>,
    pub psi: Option<&'a Path>,
}

/// The v1 `memory.stat` keys of the hierarchical totals we use.
fn memory_from_stat(
    path: &CgroupPath,
    usage: u64,
    stat: &std::collections::HashMap<String, u64>,
) -> Result<MemoryStats, CgroupError> {
    let need = |field: &'static str| {
        stat.get(field)
            .copied()
            .ok_or_else(|| CgroupError::MissingField {
                path: path.clone(),
                file: "memory.stat".into(),
                field,
            })
    };
    let opt = |field: &str| stat.get(field).copied().unwrap_or(0);
    Ok(MemoryStats {
        usage_bytes: usage,
        anon_bytes: need("total_rss")?,
        file_bytes: need("total_cache")?,
        // total_swap is absent when swap accounting is off.
        swap_bytes: opt("total_swap"),
        pgfault: need("total_pgfault")?,
        pgmajfault: need("total_pgmajfault")?,
        workingset_refault_anon: opt("total_workingset_refault_anon"),
        workingset_refault_file: opt("total_workingset_refault_file"),
        // No per-cgroup swap limit on v1 that Kubernetes writes (its swap
        // support needs v2); memsw is memory + swap, set by no one here.
        swap_max: None,
    })
}

impl MemoryCgroup for V1Cgroup {
    fn path(&self) -> &CgroupPath {
        &self.memory.path
    }

    fn version(&self) -> Version {
        Version::V1
    }

    fn procs(&self) -> Result<Vec<u32>, CgroupError> {
        self.memory.read_with("cgroup.procs", parse_procs)
    }

    fn procs_recursive(&self) -> Result<Vec<u32>, CgroupError> {
        crate::procs::procs_below(&self.memory_fs, &self.memory.path)
    }

    fn memory(&self) -> Result<MemoryStats, CgroupError> {
        let usage = self.memory.read_with("memory.usage_in_bytes", parse_u64)?;
        let stat = self.memory.read_with("memory.stat", parse_flat_keyed)?;
        memory_from_stat(&self.memory.path, usage, &stat)
    }

    fn cpu_usage(&self) -> Result<Option<Duration>, CgroupError> {
        match self.cpuacct.get(&self.memory.path) {
            Some(d) => {
                let text = d.read_held("cpuacct.usage", &self.cpu_file)?;
                let ns = parse_u64(&text).map_err(|source| CgroupError::Parse {
                    path: self.memory.path.clone(),
                    file: "cpuacct.usage".into(),
                    source,
                })?;
                Ok(Some(Duration::from_nanos(ns)))
            }
            None => Ok(None),
        }
    }

    fn memory_pressure(&self) -> Result<Option<Pressure>, CgroupError> {
        match self.psi.get(&self.memory.path) {
            Some(d) if d.exists("memory.pressure") => {
                d.read_with("memory.pressure", parse_pressure).map(Some)
            }
            _ => Ok(None),
        }
    }

    fn read_limit(&self, knob: LimitKnob) -> Result<Limit, CgroupError> {
        let file = self.v1_file(knob)?;
        if knob == LimitKnob::V1OomKillDisable {
            let m = self.memory.read_with(file, parse_flat_keyed)?;
            let v =
                m.get("oom_kill_disable")
                    .copied()
                    .ok_or_else(|| CgroupError::MissingField {
                        path: self.memory.path.clone(),
                        file: file.into(),
                        field: "oom_kill_disable",
                    })?;
            return Ok(Limit::Bytes(v));
        }
        if knob == LimitKnob::V1Freezer {
            return self.dir_of(knob)?.read_with(file, parse_freezer_state);
        }
        if knob == LimitKnob::V1CfsQuota {
            return self.dir_of(knob)?.read_with(file, parse_cfs_quota_v1);
        }
        self.dir_of(knob)?.read_with(file, parse_limit_v1)
    }

    fn write_limit(&self, knob: LimitKnob, value: Limit) -> Result<(), CgroupError> {
        let file = self.v1_file(knob)?;
        let text = match value {
            Limit::Bytes(b) if knob == LimitKnob::V1OomKillDisable => u8::from(b != 0).to_string(),
            Limit::Bytes(0) if knob == LimitKnob::V1Freezer => "THAWED".to_owned(),
            Limit::Bytes(_) if knob == LimitKnob::V1Freezer => "FROZEN".to_owned(),
            Limit::Bytes(b) => b.to_string(),
            // v1's own spelling of "no limit".
            Limit::Max => "-1".to_owned(),
        };
        self.dir_of(knob)?.write(file, &text)
    }

    fn swappiness(&self) -> Result<Option<u32>, CgroupError> {
        let v = self.memory.read_with("memory.swappiness", parse_u64)?;
        Ok(Some(u32::try_from(v).unwrap_or(u32::MAX)))
    }

    fn set_swappiness(&self, value: u32) -> Result<(), CgroupError> {
        if value > 200 {
            return Err(CgroupError::BadSwappiness {
                path: self.memory.path.clone(),
                value,
            });
        }
        self.memory.write("memory.swappiness", &value.to_string())
    }

    fn reclaim(&self, _bytes: u64) -> Result<Reclaimed, CgroupError> {
        Err(CgroupError::Unsupported {
            path: self.memory.path.clone(),
            knob: "memory.reclaim".into(),
            needs: Version::V2,
            have: Version::V1,
        })
    }
}

impl V1Cgroup {
    /// A usage threshold `delta` bytes above the usage now (see [`crate::wake`]).
    pub fn usage_threshold(&self, delta: u64) -> Result<crate::WakeEvent, CgroupError> {
        crate::wake::usage_threshold(&self.memory, delta)
    }

    /// Its usage thresholds' registrar (see [`crate::ThresholdRegistrar`]).
    pub fn threshold_registrar(&self) -> Result<crate::ThresholdRegistrar, CgroupError> {
        crate::ThresholdRegistrar::new(&self.memory)
    }

    /// An event at each entry into the OOM wait (see [`crate::wake`]).
    pub fn oom_event(&self) -> Result<crate::WakeEvent, CgroupError> {
        crate::wake::oom_event(&self.memory)
    }

    /// `memory.failcnt`: charges that met the limit.
    pub fn failcnt(&self) -> Result<u64, CgroupError> {
        self.memory.read_with("memory.failcnt", parse_u64)
    }

    /// `memory.oom_control`'s `under_oom`: a task waits at the limit.
    pub fn under_oom(&self) -> Result<bool, CgroupError> {
        let file = "memory.oom_control";
        let m = self.memory.read_with(file, parse_flat_keyed)?;
        m.get("under_oom")
            .map(|&v| v != 0)
            .ok_or_else(|| CgroupError::MissingField {
                path: self.memory.path.clone(),
                file: file.into(),
                field: "under_oom",
            })
    }

    fn v1_file(&self, knob: LimitKnob) -> Result<&'static str, CgroupError> {
        crate::knob_file(knob, &self.memory.path, Version::V1)
    }
}
