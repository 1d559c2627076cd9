//! `memext status`: one line per memory context with its memory, faults, CPU
//! and pressure, measured over a short interval. Sampling is the only I/O;
//! rates and rendering are pure.

use std::time::{Duration, Instant};

use memext_cgroup::{CgroupError, Hierarchy, MemoryCgroup, MemoryStats, Pressure};

use crate::contexts::MemoryContext;
use crate::units::human_bytes;

/// What one read of a context gives.
#[derive(Debug, Clone)]
pub struct Sample {
    pub at: Instant,
    pub pids: usize,
    pub memory: MemoryStats,
    pub cpu: Option<Duration>,
    pub pressure: Option<Pressure>,
}

/// Reads one context; `Ok(None)` if its cgroup has vanished.
pub fn sample(h: &Hierarchy, ctx: &MemoryContext) -> Result<Option<Sample>, CgroupError> {
    let read = || -> Result<Sample, CgroupError> {
        let cg = h.open(&ctx.path)?;
        Ok(Sample {
            at: Instant::now(),
            pids: cg.procs_recursive()?.len(),
            memory: cg.memory()?,
            cpu: cg.cpu_usage()?,
            pressure: cg.memory_pressure()?,
        })
    };
    match read() {
        Ok(s) => Ok(Some(s)),
        Err(CgroupError::Vanished { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// One row of the status table (and one object of `--json`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct StatusRow {
    pub id: String,
    pub runtime: String,
    pub name: Option<String>,
    pub class: String,
    pub cgroup: String,
    pub pod: Option<String>,
    pub pids: usize,
    pub resident_bytes: u64,
    pub swapped_bytes: u64,
    pub major_faults_per_s: f64,
    pub cpu_percent: Option<f64>,
    /// PSI memory "some" over the last 10 s, percent; absent where the kernel has none.
    pub memory_pressure_some_avg10: Option<f64>,
}

/// Builds a row from two samples of the same context.
pub fn row(ctx: &MemoryContext, before: &Sample, after: &Sample) -> StatusRow {
    let secs = after
        .at
        .saturating_duration_since(before.at)
        .as_secs_f64()
        .max(1e-3);
    let majflt = after
        .memory
        .pgmajfault
        .saturating_sub(before.memory.pgmajfault) as f64
        / secs;
    let cpu = match (before.cpu, after.cpu) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a).as_secs_f64() / secs * 100.0),
        _ => None,
    };
    StatusRow {
        id: ctx.identity.id.clone(),
        runtime: ctx.identity.runtime.to_string(),
        name: ctx.name.clone(),
        class: ctx.class.to_string(),
        cgroup: ctx.path.to_string(),
        pod: ctx.identity.pod.clone(),
        pids: after.pids,
        resident_bytes: after.memory.resident_bytes(),
        swapped_bytes: after.memory.swap_bytes,
        major_faults_per_s: majflt,
        cpu_percent: cpu,
        memory_pressure_some_avg10: after.pressure.map(|p| p.some.avg10),
    }
}

/// Samples every context twice, `interval` apart.
pub fn collect(
    h: &Hierarchy,
    ctxs: &[MemoryContext],
    interval: Duration,
) -> Result<Vec<StatusRow>, CgroupError> {
    let first: Vec<Option<Sample>> = ctxs
        .iter()
        .map(|c| sample(h, c))
        .collect::<Result<_, _>>()?;
    std::thread::sleep(interval);
    let mut rows = Vec::new();
    for (ctx, before) in ctxs.iter().zip(first) {
        let (Some(before), Some(after)) = (before, sample(h, ctx)?) else {
            continue;
        };
        rows.push(row(ctx, &before, &after));
    }
    Ok(rows)
}

/// Renders rows as an aligned table.
pub fn render_table(rows: &[StatusRow]) -> String {
    let header = [
        "ID", "RUNTIME", "NAME", "CLASS", "PIDS", "RESIDENT", "SWAPPED", "MAJFLT/s", "CPU%",
        "PSI-MEM",
    ];
    let cells: Vec<[String; 10]> = rows
        .iter()
        .map(|r| {
            let short = if r.runtime == "plain" || r.runtime == "systemd" {
                r.cgroup.clone()
            } else {
                r.id.chars().take(12).collect()
            };
            [
                short,
                r.runtime.clone(),
                r.name.clone().unwrap_or_else(|| "-".into()),
                r.class.clone(),
                r.pids.to_string(),
                human_bytes(r.resident_bytes),
                human_bytes(r.swapped_bytes),
                format!("{:.1}", r.major_faults_per_s),
                r.cpu_percent.map_or("-".into(), |c| format!("{c:.1}")),
                r.memory_pressure_some_avg10
                    .map_or("-".into(), |p| format!("{p:.2}")),
            ]
        })
        .collect();
    let mut width = header.map(str::len);
    for c in &cells {
        for (w, s) in width.iter_mut().zip(c) {
            *w = (*w).max(s.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |fields: Vec<&str>| {
        let mut l = String::new();
        for (i, (f, w)) in fields.iter().zip(width).enumerate() {
            // Text columns left-aligned, numbers right-aligned.
            if i < 4 {
                l.push_str(&format!("{f:<w$}  "));
            } else {
                l.push_str(&format!("{f:>w$}  "));
            }
        }
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(header.to_vec());
    for c in &cells {
        line(c.iter().map(String::as_str).collect());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Class;
    use crate::identity::{Identity, Runtime};
    use memext_cgroup::CgroupPath;

    fn ctx() -> MemoryContext {
        MemoryContext {
            path: CgroupPath::parse(&format!("/docker/{}", "ab".repeat(32))).expect("path"),
            identity: Identity {
                runtime: Runtime::Docker,
                id: "ab".repeat(32),
                pod: None,
            },
            name: Some("redis".into()),
            class: Class::Critical,
            selector: Some(0),
            annotated: false,
            pod: None,
        }
    }

    fn sample_at(at: Instant, majflt: u64, cpu_ms: u64) -> Sample {
        Sample {
            at,
            pids: 3,
            memory: MemoryStats {
                anon_bytes: 100 << 20,
                file_bytes: 28 << 20,
                swap_bytes: 1 << 30,
                pgmajfault: majflt,
                ..Default::default()
            },
            cpu: Some(Duration::from_millis(cpu_ms)),
            pressure: None,
        }
    }

    #[test]
    fn rates_over_the_interval() {
        let t0 = Instant::now();
        let r = row(
            &ctx(),
            &sample_at(t0, 100, 1000),
            &sample_at(t0 + Duration::from_secs(2), 300, 2000),
        );
        assert!((r.major_faults_per_s - 100.0).abs() < 1e-9);
        assert!((r.cpu_percent.expect("cpu") - 50.0).abs() < 1e-9);
        assert_eq!(r.resident_bytes, 128 << 20);
        assert_eq!(r.swapped_bytes, 1 << 30);
        assert_eq!(r.memory_pressure_some_avg10, None);
    }

    #[test]
    fn counter_reset_does_not_underflow() {
        let t0 = Instant::now();
        let r = row(
            &ctx(),
            &sample_at(t0, 300, 2000),
            &sample_at(t0 + Duration::from_secs(1), 10, 10),
        );
        assert_eq!(r.major_faults_per_s, 0.0);
        assert_eq!(r.cpu_percent, Some(0.0));
    }

    #[test]
    fn table_is_aligned() {
        let t0 = Instant::now();
        let r = row(
            &ctx(),
            &sample_at(t0, 0, 0),
            &sample_at(t0 + Duration::from_secs(1), 5, 250),
        );
        let t = render_table(&[
            r.clone(),
            StatusRow {
                name: None,
                pids: 12345,
                ..r
            },
        ]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("ID "));
        assert!(lines[1].starts_with("abababababab  docker"));
        // Right-aligned columns end at the same place.
        let end = |l: &str| l.find("128MiB").map(|i| i + 6);
        assert_eq!(end(lines[1]), end(lines[2]));
        assert!(lines[2].contains(" - "));
    }
}
