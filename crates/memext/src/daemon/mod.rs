//! `memext daemon`: the observe → model → plan → act loop over the selected
//! memory contexts. The model and the planner are memext-engine's pure code;
//! this module adds the I/O, the timing and the safety: every knob goes
//! through the ledger, page moves go to the mover thread, `--dry-run` only
//! prints, and SIGTERM/SIGINT restore every knob memext changed.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use memext_cgroup::{
    AnyCgroup, CgroupError, Hierarchy, Limit, LimitKnob, MemoryCgroup, MemoryStats, Version,
};
use memext_engine::activity::Counters;
use memext_engine::model::{ContextModel, ModelParams, State, Transition};
use memext_engine::planner::{plan, ContextInput, PlanInput};
use memext_engine::predict::{decide, PredictParams, PrefetchReason};
use memext_engine::workingset::WorkingSet;
use memext_engine::Instant;
use memext_sys::pagemap::{PageState, Pagemap};

use crate::config::{Class, ClassParams, Config};
use crate::contexts::{discover, DiscoverOptions, MemoryContext};
use crate::control::{self, DaemonRow};
use crate::ledger::Ledger;
use crate::mover::{self, Mover};

mod act;

/// How long a chunk's heat lasts before it is demoted one queue.
const HEAT_LIFETIME: Duration = Duration::from_secs(300);
/// PSI "some" share (percent, 10 s average) that counts as pressure.
const PRESSURE_PSI: f64 = 5.0;

pub struct Options {
    pub dry_run: bool,
    /// Serve Prometheus metrics here.
    pub metrics_addr: Option<std::net::SocketAddr>,
    /// Run this many ticks and stop (tests, dry runs); None: until a signal.
    pub ticks: Option<u64>,
}

/// One context the daemon manages.
struct Tracked {
    ctx: MemoryContext,
    cg: AnyCgroup,
    params: ClassParams,
    model: ContextModel,
    ws: WorkingSet,
    last_ws: Option<Instant>,
    memory: MemoryStats,
    pids: Vec<u32>,
    under_pressure: bool,
    /// memext pushed it out and has not brought it back since.
    out: bool,
    /// Brought back for a predicted wake: held in (sized for its working set,
    /// not pushed out again) until then, so the wake finds it in DRAM.
    held: Option<(Duration, PrefetchReason)>,
    /// Faults the kernel counted to the context while memext itself was
    /// moving its pages (MADV_COLLAPSE reads swapped pages in as the context's
    /// faults): (minor, major), left out of what the model sees, so that memext's
    /// own bring-back is never taken for a wake.
    faults_by_memext: (u64, u64),
    /// The mover had a job for it at the last tick.
    was_moving: bool,
    target: u64,
    accuracy: Option<f64>,
    /// Actions printed last (dry run): print only what changes.
    said: String,
}

impl Tracked {
    /// What the model sees: the context's counters less memext's own faults.
    fn counters(&self, at: Duration, cpu: Duration) -> Counters {
        Counters {
            at,
            cpu,
            pgfault: self.memory.pgfault.saturating_sub(self.faults_by_memext.0),
            pgmajfault: self
                .memory
                .pgmajfault
                .saturating_sub(self.faults_by_memext.1),
        }
    }
}

fn model_params(p: &ClassParams) -> ModelParams {
    ModelParams {
        idle_after: p.idle_after,
        ..Default::default()
    }
}

pub struct Daemon {
    cfg: Config,
    h: Hierarchy,
    opts: Options,
    start: std::time::Instant,
    tracked: BTreeMap<String, Tracked>,
    ledger: Ledger,
    mover: Option<Mover>,
    rows: control::Rows,
    gauges: Arc<crate::metrics::DaemonGauges>,
    said_foreign: HashSet<String>,
}

impl Daemon {
    pub fn new(cfg: Config, h: Hierarchy, opts: Options) -> anyhow::Result<Self> {
        let state_file = cfg.host.state_dir.join("daemon.json");
        let mut ledger = Ledger::load(&state_file)?;
        if !opts.dry_run {
            for d in ledger.reconcile(&h)? {
                tracing::warn!("left from an earlier run, no longer memext's: {d}");
            }
            if !ledger.records().is_empty() {
                tracing::info!(
                    "adopted {} knob(s) from an earlier run",
                    ledger.records().len()
                );
            }
        }
        Ok(Self {
            cfg,
            h,
            opts,
            start: std::time::Instant::now(),
            tracked: BTreeMap::new(),
            ledger,
            mover: None,
            rows: control::Rows::default(),
            gauges: Arc::default(),
            said_foreign: HashSet::new(),
        })
    }

    fn now(&self) -> Instant {
        self.start.elapsed()
    }

    /// DRAM the selected contexts may use together.
    fn capacity(&self) -> anyhow::Result<u64> {
        let d = &self.cfg.daemon;
        if let Some(c) = d.capacity {
            return Ok(c.0);
        }
        if let Some(p) = &d.capacity_cgroup {
            let path = memext_cgroup::CgroupPath::parse(p)?;
            let cg = self
                .h
                .open(&path)
                .with_context(|| format!("daemon.capacity_cgroup {p}"))?;
            let knob = match cg.version() {
                Version::V1 => LimitKnob::V1Limit,
                Version::V2 => LimitKnob::Max,
            };
            if let Limit::Bytes(b) = cg.read_limit(knob)? {
                return Ok(b);
            }
        }
        let meminfo = std::fs::read_to_string("/proc/meminfo").context("reading /proc/meminfo")?;
        let total_kib: u64 = meminfo
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .context("no MemTotal in /proc/meminfo")?;
        Ok((total_kib * 1024).saturating_sub(d.reserve.0))
    }

    pub fn run(mut self, stop: &AtomicBool) -> anyhow::Result<()> {
        let listener = control::serve(&self.cfg.daemon.socket, self.rows.clone())?;
        let metrics = match self.opts.metrics_addr {
            Some(a) => {
                let m = crate::metrics::serve(a, self.rows.clone(), self.gauges.clone())?;
                tracing::info!("metrics on http://{}/metrics", m.addr);
                Some(m)
            }
            None => None,
        };
        self.mover = (!self.opts.dry_run).then(Mover::start);
        // The pmem broker, when the policy asks for it here rather than on its own.
        let broker_stop = Arc::new(AtomicBool::new(false));
        let broker = if self.cfg.pmem.in_daemon && !self.opts.dry_run {
            let b = Arc::new(crate::pmem::broker::Broker::new(
                &self.cfg.pmem,
                &self.cfg.runtimes,
            )?);
            Some(crate::pmem::broker::serve(
                b,
                self.cfg.pmem.socket.clone(),
                broker_stop.clone(),
            )?)
        } else {
            None
        };
        let tick = self.cfg.daemon.tick.0;
        let poll = self.cfg.daemon.poll.0;
        let mut next_tick = self.now();
        let mut ticks = 0u64;
        tracing::info!(
            "memext daemon: cgroup {}, capacity {}, tick {:?}, poll {:?}{}",
            self.h.version,
            crate::units::human_bytes(self.capacity()?),
            tick,
            poll,
            if self.opts.dry_run { ", dry run" } else { "" }
        );
        let result = (|| -> anyhow::Result<()> {
            while !stop.load(Ordering::Relaxed) {
                if self.now() >= next_tick {
                    self.tick()?;
                    ticks += 1;
                    if self.opts.ticks.is_some_and(|n| ticks >= n) {
                        break;
                    }
                    next_tick += tick;
                } else {
                    self.poll_idle()?;
                    std::thread::sleep(poll.min(next_tick.saturating_sub(self.now())));
                }
            }
            Ok(())
        })();
        self.shutdown(listener);
        if let Some(m) = metrics {
            m.close();
        }
        if let Some(b) = broker {
            broker_stop.store(true, Ordering::Relaxed);
            let _ = b.join();
            let _ = std::fs::remove_file(&self.cfg.pmem.socket);
        }
        result
    }

    fn shutdown(&mut self, listener: control::Listener) {
        if let Some(m) = self.mover.take() {
            m.stop();
        }
        if !self.opts.dry_run {
            match self.ledger.restore_all(&self.h) {
                Ok(problems) => problems
                    .iter()
                    .for_each(|p| tracing::warn!("not restored: {p}")),
                Err(e) => tracing::error!("restoring knobs: {e:#}"),
            }
        }
        listener.close();
        if self.opts.dry_run {
            tracing::info!("memext daemon stopped (dry run: nothing was changed)");
        } else {
            tracing::info!("memext daemon stopped; knobs restored");
        }
    }

    /// Brings the tracked set in line with what discovery finds now.
    fn sync_contexts(&mut self) -> anyhow::Result<()> {
        let now = self.now();
        let found = discover(&self.h, &self.cfg, DiscoverOptions::default())?;
        let mut seen = HashSet::new();
        for ctx in found.into_iter().filter(|c| c.class != Class::Ignore) {
            let key = ctx.path.as_str().to_owned();
            if self.ledger.is_foreign(&ctx.path) {
                continue;
            }
            seen.insert(key.clone());
            if self.tracked.contains_key(&key) {
                continue;
            }
            let Some(params) = self.cfg.params(ctx.class).cloned() else {
                continue;
            };
            let cg = match self.h.open(&ctx.path) {
                Ok(cg) => cg,
                Err(CgroupError::Vanished { .. }) => continue,
                Err(e) => return Err(e.into()),
            };
            tracing::info!("tracking {} ({}, {})", key, ctx.identity.runtime, ctx.class);
            self.tracked.insert(
                key,
                Tracked {
                    ctx,
                    cg,
                    params,
                    model: ContextModel::new(now),
                    ws: WorkingSet::default(),
                    last_ws: None,
                    memory: MemoryStats::default(),
                    pids: Vec::new(),
                    under_pressure: false,
                    out: false,
                    held: None,
                    faults_by_memext: (0, 0),
                    was_moving: false,
                    target: 0,
                    accuracy: None,
                    said: String::new(),
                },
            );
        }
        self.tracked.retain(|k, _| seen.contains(k));
        Ok(())
    }

    fn tick(&mut self) -> anyhow::Result<()> {
        self.sync_contexts()?;
        let now = self.now();
        let ws_every = self.cfg.daemon.ws_interval.0;
        let mut gone = Vec::new();
        for (key, t) in &mut self.tracked {
            let read = read_context(&t.cg);
            let (pids, memory, cpu, psi) = match read {
                Ok(r) => r,
                Err(CgroupError::Vanished { .. }) => {
                    gone.push(key.clone());
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            // t.memory is still the last tick's reading (zero before the first).
            let majflt = memory.pgmajfault.saturating_sub(t.memory.pgmajfault);
            t.under_pressure = psi.is_some_and(|p| p.some.avg10 > PRESSURE_PSI)
                || (t.memory.pgmajfault > 0 && majflt > 10);
            let moving = self.mover.as_ref().is_some_and(|m| m.is_busy(key));
            if moving || t.was_moving {
                // Faults since the last tick happened while memext moved pages.
                t.faults_by_memext.0 += memory.pgfault.saturating_sub(t.memory.pgfault);
                t.faults_by_memext.1 += memory.pgmajfault.saturating_sub(t.memory.pgmajfault);
            }
            t.was_moving = moving;
            t.memory = memory;
            t.pids = pids;
            let c = t.counters(now, cpu.unwrap_or_default());
            let transition = t.model.observe(c, &model_params(&t.params));
            let snapshot = match transition {
                // The working set is recorded before the context is pushed out.
                Some(Transition::BecameIdle) => true,
                _ => {
                    t.model.state == State::Active
                        && t.last_ws.is_none_or(|l| now.saturating_sub(l) >= ws_every)
                }
            };
            if snapshot && !t.out {
                record_working_set(&mut t.ws, now, &t.pids);
                t.last_ws = Some(now);
            }
            if let Some(tr) = transition {
                tracing::info!("{key}: {tr:?} ({})", t.model.state);
                if tr != Transition::BecameIdle {
                    t.held = None; // the wake it was held for has come
                }
                if tr == Transition::Woke {
                    self.gauges
                        .wakes
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            }
        }
        for k in gone {
            tracing::info!("{k}: gone");
            self.tracked.remove(&k);
        }
        self.collect_accuracy();
        let keys: Vec<String> = self.tracked.keys().cloned().collect();
        let models: Vec<&ContextModel> = keys.iter().map(|k| &self.tracked[k].model).collect();
        let pp = PredictParams {
            lead: self.cfg.daemon.prefetch_lead.0,
            ..Default::default()
        };
        let prefetch = decide(now, &models, &pp);
        let input = PlanInput {
            capacity: self.capacity()?,
            contexts: keys
                .iter()
                .zip(&prefetch)
                .map(|(k, p)| {
                    let t = &self.tracked[k];
                    ContextInput {
                        key: k.clone(),
                        class: match t.ctx.class {
                            Class::Critical => memext_engine::Class::Critical,
                            _ => memext_engine::Class::Extend,
                        },
                        state: t.model.state,
                        usage: t.memory.usage_bytes,
                        working_set: t.ws.bytes(),
                        swapped: t.memory.swap_bytes,
                        floor: t.params.floor.0,
                        headroom_pct: t.params.headroom.0,
                        under_pressure: t.under_pressure,
                        // A context memext did not push out has nothing of memext's to
                        // bring back; one brought back for a predicted wake stays held.
                        prefetch: p
                            .filter(|_| t.out)
                            .or(t.held.filter(|(until, _)| now < *until).map(|(_, r)| r)),
                    }
                })
                .collect(),
        };
        self.gauges
            .capacity_bytes
            .store(input.capacity, std::sync::atomic::Ordering::Relaxed);
        self.gauges
            .ticks
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let p = plan(&input);
        if p.overcommitted {
            tracing::warn!("critical demand and floors exceed the capacity");
        }
        for (k, target) in keys.iter().zip(&p.targets) {
            if let Some(t) = self.tracked.get_mut(k) {
                t.target = *target;
            }
        }
        let was = self
            .gauges
            .throttled
            .swap(p.throttle, std::sync::atomic::Ordering::Relaxed);
        if p.throttle != was {
            if p.throttle {
                let pressed: Vec<&str> = self
                    .tracked
                    .iter()
                    .filter(|(_, t)| t.ctx.class == Class::Critical && t.under_pressure)
                    .map(|(k, _)| k.as_str())
                    .collect();
                tracing::warn!(
                    "critical context under memory pressure ({}): page-out and prefetch at a quarter of their bandwidth",
                    pressed.join(", ")
                );
            } else {
                tracing::info!(
                    "no critical context under pressure: page-out and prefetch at full bandwidth"
                );
            }
        }
        self.apply(&p.actions, p.throttle)?;
        self.publish();
        Ok(())
    }

    fn collect_accuracy(&mut self) {
        let Some(m) = &self.mover else { return };
        let window = self.cfg.daemon.accuracy_window.0;
        let due: Vec<(String, Vec<(u32, memext_sys::AddrRange)>)> = match m.stats.lock() {
            Ok(mut s) => s
                .iter_mut()
                .filter_map(|(k, st)| {
                    let (at, _) = st.last_bring_back.as_ref()?;
                    (at.elapsed() >= window).then(|| {
                        (
                            k.clone(),
                            st.last_bring_back
                                .take()
                                .map(|(_, r)| r)
                                .unwrap_or_default(),
                        )
                    })
                })
                .collect(),
            Err(_) => return,
        };
        for (k, ranges) in due {
            if let (Some(t), Some(a)) = (self.tracked.get_mut(&k), mover::accuracy(&ranges)) {
                t.accuracy = Some(a);
            }
        }
    }

    fn publish(&self) {
        let now = self.now();
        let stats = self
            .mover
            .as_ref()
            .and_then(|m| m.stats.lock().ok().map(|s| s.clone()))
            .unwrap_or_default();
        let rows = self
            .tracked
            .iter()
            .map(|(k, t)| {
                let s = stats.get(k).cloned().unwrap_or_default();
                DaemonRow {
                    id: t.ctx.identity.id.clone(),
                    runtime: t.ctx.identity.runtime.to_string(),
                    name: t.ctx.name.clone(),
                    class: t.ctx.class.to_string(),
                    cgroup: k.clone(),
                    state: t.model.state.to_string(),
                    target_bytes: t.target,
                    resident_bytes: t.memory.resident_bytes(),
                    swapped_bytes: t.memory.swap_bytes,
                    working_set_bytes: t.ws.bytes(),
                    last_wake_s_ago: t
                        .model
                        .history
                        .last()
                        .map(|w| now.saturating_sub(w).as_secs_f64()),
                    pushed_out_pages: s.pushed_out_pages,
                    brought_back_pages: s.brought_back_pages,
                    mapped_back_pages: s.mapped_back_pages,
                    prefetch_accuracy: t.accuracy,
                    out: t.out,
                }
            })
            .collect();
        if let Ok(mut r) = self.rows.lock() {
            *r = rows;
        }
        self.gauges.owned_knobs.store(
            self.ledger.records().len(),
            std::sync::atomic::Ordering::Relaxed,
        );
    }
}

type ContextReading = (
    Vec<u32>,
    MemoryStats,
    Option<Duration>,
    Option<memext_cgroup::Pressure>,
);

/// One full read of a context's cgroup: pids, memory, CPU time, pressure.
fn read_context(cg: &AnyCgroup) -> Result<ContextReading, CgroupError> {
    Ok((
        cg.procs_recursive()?,
        cg.memory()?,
        cg.cpu_usage()?,
        cg.memory_pressure()?,
    ))
}

/// Adds a snapshot of the resident private anonymous memory of `pids`.
fn record_working_set(ws: &mut WorkingSet, now: Instant, pids: &[u32]) {
    ws.retain_pids(pids);
    for &pid in pids {
        let Ok(maps) = memext_sys::maps::read_maps(pid) else {
            continue;
        };
        let anon: Vec<_> = maps
            .into_iter()
            .filter(|m| m.is_private_anonymous())
            .collect();
        let Ok(ranges) = Pagemap::open(pid).and_then(|mut pm| pm.scan_mappings(&anon)) else {
            continue;
        };
        let resident: Vec<(u64, u64)> = ranges
            .iter()
            .filter(|r| r.state == PageState::Resident)
            .map(|r| (r.range.start, r.range.end))
            .collect();
        ws.record(now, pid, &resident);
    }
}

/// Registers SIGTERM and SIGINT to set `stop`.
pub fn stop_on_signals() -> anyhow::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(sig, stop.clone()).context("installing a signal handler")?;
    }
    Ok(stop)
}
