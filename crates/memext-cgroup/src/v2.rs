//! cgroup v2: one unified hierarchy with memory, cpu and PSI in each cgroup.

use std::path::Path;
use std::time::Duration;

use crate::dirfd::{CgroupDir, HeldFile};
use crate::parse::{
    parse_cpu_max, parse_flat_keyed, parse_limit_v2, parse_pressure, parse_procs, parse_u64,
};
use crate::{
    CgroupError, CgroupPath, Limit, LimitKnob, MemoryCgroup, MemoryStats, Pressure, Reclaimed,
    Version,
};

#[derive(Debug)]
pub struct V2Cgroup {
    dir: CgroupDir,
    fs: std::path::PathBuf,
    /// `cpu.stat`, held open.
    cpu_file: HeldFile,
}

impl V2Cgroup {
    pub fn open(root: &Path, path: &CgroupPath) -> Result<Self, CgroupError> {
        let fs = path.under(root);
        Ok(Self {
            dir: CgroupDir::open(&fs, path)?,
            fs,
            cpu_file: HeldFile::default(),
        })
    }

    /// A PSI trigger on this cgroup's `memory.pressure` (see [`crate::wake`]).
    pub fn pressure_trigger(&self) -> Result<crate::WakeEvent, CgroupError> {
        crate::wake::pressure_trigger(&self.dir)
    }

    /// `memory.events`' `max`: charges that met `memory.max`.
    pub fn max_events(&self) -> Result<u64, CgroupError> {
        let file = "memory.events";
        let m = self.dir.read_with(file, parse_flat_keyed)?;
        m.get("max")
            .copied()
            .ok_or_else(|| CgroupError::MissingField {
                path: self.dir.path.clone(),
                file: file.into(),
                field: "max",
            })
    }

    fn v2_file(&self, knob: LimitKnob) -> Result<&'static str, CgroupError> {
        crate::knob_file(knob, &self.dir.path, Version::V2)
    }
}

impl MemoryCgroup for V2Cgroup {
    fn path(&self) -> &CgroupPath {
        &self.dir.path
    }

    fn version(&self) -> Version {
        Version::V2
    }

    fn procs(&self) -> Result<Vec<u32>, CgroupError> {
        self.dir.read_with("cgroup.procs", parse_procs)
    }

    fn procs_recursive(&self) -> Result<Vec<u32>, CgroupError> {
        crate::procs::procs_below(&self.fs, &self.dir.path)
    }

    fn memory(&self) -> Result<MemoryStats, CgroupError> {
        let path = &self.dir.path;
        let usage = self.dir.read_with("memory.current", parse_u64)?;
        let stat = self.dir.read_with("memory.stat", parse_flat_keyed)?;
        let need = |field: &'static str| {
            stat.get(field)
                .copied()
                .ok_or_else(|| CgroupError::MissingField {
                    path: path.clone(),
                    file: "memory.stat".into(),
                    field,
                })
        };
        // memory.swap.current is absent when the kernel has no swap accounting.
        let swap = if self.dir.exists("memory.swap.current") {
            self.dir.read_with("memory.swap.current", parse_u64)?
        } else {
            0
        };
        // memory.swap.max: "max", or the limit Kubernetes' LimitedSwap wrote.
        let swap_max = if self.dir.exists("memory.swap.max") {
            match self.dir.read_with("memory.swap.max", parse_limit_v2)? {
                Limit::Bytes(b) => Some(b),
                Limit::Max => None,
            }
        } else {
            None
        };
        Ok(MemoryStats {
            usage_bytes: usage,
            swap_max,
            anon_bytes: need("anon")?,
            file_bytes: need("file")?,
            swap_bytes: swap,
            pgfault: need("pgfault")?,
            pgmajfault: need("pgmajfault")?,
            workingset_refault_anon: stat.get("workingset_refault_anon").copied().unwrap_or(0),
            workingset_refault_file: stat.get("workingset_refault_file").copied().unwrap_or(0),
        })
    }

    fn cpu_usage(&self) -> Result<Option<Duration>, CgroupError> {
        let text = self.dir.read_held("cpu.stat", &self.cpu_file)?;
        let stat = parse_flat_keyed(&text).map_err(|source| CgroupError::Parse {
            path: self.dir.path.clone(),
            file: "cpu.stat".into(),
            source,
        })?;
        let usec = stat
            .get("usage_usec")
            .copied()
            .ok_or_else(|| CgroupError::MissingField {
                path: self.dir.path.clone(),
                file: "cpu.stat".into(),
                field: "usage_usec",
            })?;
        Ok(Some(Duration::from_micros(usec)))
    }

    fn memory_pressure(&self) -> Result<Option<Pressure>, CgroupError> {
        if !self.dir.exists("memory.pressure") {
            return Ok(None); // kernel booted with psi=0
        }
        self.dir
            .read_with("memory.pressure", parse_pressure)
            .map(Some)
    }

    fn read_limit(&self, knob: LimitKnob) -> Result<Limit, CgroupError> {
        let file = self.v2_file(knob)?;
        if knob == LimitKnob::CpuMax {
            return self.dir.read_with(file, parse_cpu_max);
        }
        self.dir.read_with(file, parse_limit_v2)
    }

    fn write_limit(&self, knob: LimitKnob, value: Limit) -> Result<(), CgroupError> {
        let file = self.v2_file(knob)?;
        self.dir.write(file, &value.to_string())
    }

    fn swappiness(&self) -> Result<Option<u32>, CgroupError> {
        Ok(None)
    }

    fn set_swappiness(&self, _value: u32) -> Result<(), CgroupError> {
        Err(CgroupError::Unsupported {
            path: self.dir.path.clone(),
            knob: "memory.swappiness".into(),
            needs: Version::V1,
            have: Version::V2,
        })
    }

    fn reclaim(&self, bytes: u64) -> Result<Reclaimed, CgroupError> {
        match self.dir.write("memory.reclaim", &bytes.to_string()) {
            Ok(()) => Ok(Reclaimed::All),
            Err(CgroupError::Write { source, .. }) if source.raw_os_error() == Some(11) => {
                Ok(Reclaimed::Partial) // EAGAIN: the kernel reclaimed less than asked
            }
            Err(e) => Err(e),
        }
    }
}
