//! `memext daemon`: the observe → decide → act loop over the selected memory
//! contexts.
//!
//! - [`observe`] reads typed samples and host facts through a [`Host`] (proc
//!   root, cgroup hierarchy, clock);
//! - memext-engine's [`Engine`] decides (pure: samples, model, policy and
//!   time in; ordered commands out);
//! - [`act`] carries the commands out (knobs through the [`ledger`], pages
//!   through the [`mover`]) and reports each outcome back to the engine;
//! - [`serve`] and [`metrics`] publish the engine's typed state; [`events`]
//!   logs every action as a structured event.
//!
//! This module only wires them: no decision is made here. SIGTERM/SIGINT stop
//! the loop and restore every knob memext changed.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::Context as _;
use memext_cgroup::{AnyCgroup, LimitKnob};
use memext_engine::context::ContextState;
use memext_engine::engine::{Command, Engine, EngineParams, Outcome};
use memext_engine::{ContextId, Instant};

use crate::config::Config;
use crate::contexts::MemoryContext;

pub mod act;
mod arming;
mod closer;
pub mod events;
#[cfg(test)]
mod fixtures;
mod foretold;
mod idle_cpu;
pub mod ledger;
mod ledger_store;
pub mod metrics;
pub mod model_store;
pub mod mover;
mod mover_map;
mod notify;
pub mod observe;
pub mod observe_events;
mod paced;
mod pages;
pub mod priority;
mod publish;
pub mod reclaim;
mod sampling;
pub mod serve;
mod tracking;
pub mod wake_gate;
mod wakes;

use act::Actuator;
use ledger::{KnobRecord, Ledger};
use model_store::ModelStore;
use mover::Mover;
use observe::{Host, Observer, PollingObserver};
use observe_events::EventObserver;
use serve::Reports;

pub struct Options {
    pub dry_run: bool,
    /// Serve Prometheus metrics here.
    pub metrics_addr: Option<std::net::SocketAddr>,
    /// Run this many ticks and stop (tests, dry runs); None: until a signal.
    pub ticks: Option<u64>,
}

/// The host side of a context the engine tracks: what it is and its cgroup.
struct Tracked {
    ctx: MemoryContext,
    cg: AnyCgroup,
    /// When a tick last read it.
    sampled: Option<Instant>,
}

pub struct Daemon {
    cfg: Config,
    opts: Options,
    observer: Box<dyn Observer>,
    engine: Engine,
    tracked: BTreeMap<ContextId, Tracked>,
    act: Actuator,
    reports: Reports,
    gauges: Arc<metrics::DaemonGauges>,
    /// Where the engine's model is saved, and what a restart loaded from it
    /// for contexts not found again yet.
    store: ModelStore,
    saved: BTreeMap<ContextId, ContextState>,
    /// Something worth saving happened since the last save.
    dirty: bool,
    last_save: Instant,
    /// The watched set or a watched context's state may have changed since
    /// the observer was last given it (a tick ran, or something was seen).
    rewatch: bool,
    /// A lowering a wake waited for ended: tick at once.
    tick_now: bool,
    /// Guarded idle contexts' CPU time, read through their parents.
    idle_cpu: idle_cpu::IdleCpu,
    /// The cgroup whose limit is the capacity (`daemon.capacity_cgroup`):
    /// how often a charge met that limit goes to the metrics each tick.
    cap: Option<memext_cgroup::AnyCgroup>,
    /// The background moves' cpu cgroup (`daemon.move_group`), switched on
    /// while a critical context runs.
    move_group: Option<Arc<priority::MoveGroup>>,
    /// `daemon.foretold_calls`: calls known ahead, told to the engine.
    foretold: Option<foretold::ForetoldCalls>,
}

/// The longest the loop waits for events before it comes round again.
const MAX_BLOCK: std::time::Duration = std::time::Duration::from_millis(200);

/// The model is saved after any change of state or page move (at most every
/// `SAVE_DIRTY_EVERY`: a save writes every context, and a thousand push-outs
/// in a row would otherwise write it at every tick), and at least every
/// `SAVE_EVERY`.
const SAVE_EVERY: std::time::Duration = std::time::Duration::from_secs(30);
const SAVE_DIRTY_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

impl Daemon {
    pub fn new(cfg: Config, host: Host, opts: Options) -> anyhow::Result<Self> {
        let state_file = cfg.host.state_dir.join("daemon.json");
        let mut ledger = Ledger::load(&state_file)?;
        if !opts.dry_run {
            for d in ledger.reconcile(&host.hierarchy)? {
                tracing::warn!(
                    event = "disowned",
                    "left from an earlier run, no longer memext's: {d}"
                );
            }
            // A context an earlier run froze to wait for room runs again:
            // this run knows nothing of its place in the queue.
            let frozen =
                |r: &KnobRecord| matches!(r.knob, LimitKnob::V1Freezer | LimitKnob::Freeze);
            for (r, outcome) in ledger.release_where(&host.hierarchy, frozen)? {
                tracing::info!(
                    event = "thawed",
                    context = %r.cgroup,
                    "{}: thawed, an earlier run left it waiting ({outcome:?})",
                    r.cgroup
                );
            }
            let knobs = ledger.records().len();
            if knobs > 0 {
                tracing::info!(
                    event = "adopted",
                    knobs,
                    "adopted {knobs} knob(s) from an earlier run"
                );
            }
        }
        let engine = Engine::new(EngineParams {
            prefetch_lead: cfg.daemon.prefetch_lead.0,
            ws_interval: cfg.daemon.ws_interval.0,
            keep_free: cfg.daemon.keep_free.map(|b| b.0),
        });
        let store = ModelStore::new(&cfg.host.state_dir, &host.proc_root);
        let loaded = store.load();
        if let Some(why) = &loaded.discarded {
            tracing::warn!(
                event = "model-discarded",
                "the saved model is not used: {why}"
            );
        } else if !loaded.contexts.is_empty() {
            tracing::info!(
                event = "model-loaded",
                contexts = loaded.contexts.len(),
                dropped_processes = loaded.dropped_processes,
                "loaded what an earlier run learned of {} context(s) ({} process(es) gone since)",
                loaded.contexts.len(),
                loaded.dropped_processes
            );
        }
        let last_save = host.clock.now();
        let cap = observe::capacity_cgroup(&host, &cfg)?;
        let observer: Box<dyn Observer> = match cfg.daemon.observer {
            crate::config::ObserverKind::Events => {
                raise_open_files();
                Box::new(EventObserver::new(host, cfg.daemon.poll.0)?)
            }
            crate::config::ObserverKind::Polling => {
                Box::new(PollingObserver::new(host, cfg.daemon.poll.0))
            }
        };
        let foretold = cfg
            .daemon
            .foretold_calls
            .clone()
            .map(foretold::ForetoldCalls::new);
        Ok(Self {
            cfg,
            opts,
            observer,
            engine,
            tracked: BTreeMap::new(),
            act: Actuator::new(ledger, None),
            reports: Reports::default(),
            gauges: Arc::default(),
            store,
            saved: loaded.contexts,
            dirty: false,
            last_save,
            rewatch: true,
            tick_now: false,
            idle_cpu: idle_cpu::IdleCpu::default(),
            foretold,
            cap,
            move_group: None,
        })
    }

    fn now(&self) -> Instant {
        self.observer.host().clock.now()
    }

    pub fn run(mut self, stop: &AtomicBool) -> anyhow::Result<()> {
        let listener = serve::serve(&self.cfg.daemon.socket, self.reports.clone())?;
        let metrics = match self.opts.metrics_addr {
            Some(a) => {
                let m = metrics::serve(a, self.reports.clone(), self.gauges.clone())?;
                tracing::info!("metrics on http://{}/metrics", m.addr);
                Some(m)
            }
            None => None,
        };
        if !self.opts.dry_run {
            let gate = wake_gate::WakeGate::default();
            let priorities = priority::MovePriorities::from_config(&self.cfg.daemon);
            self.move_group = self
                .cfg
                .daemon
                .move_group
                .then(|| {
                    let h = &self.observer.host().hierarchy;
                    priority::background_group(h.cpu_root.as_deref(), priorities.background)
                })
                .flatten();
            let priorities = priorities.in_group(self.move_group.clone());
            self.act
                .start_mover(Mover::start(gate.clone(), priorities.clone()));
            if self.cfg.daemon.reclaim.in_background() {
                let h = self.observer.host().hierarchy.clone();
                let page_out = self.cfg.daemon.reclaim == crate::config::ReclaimIn::PageOut;
                self.act.start_reclaimer(
                    reclaim::Reclaimer::start_at(h, page_out, gate, priorities),
                    self.cfg.daemon.yield_to_wakes,
                );
            }
        }
        let broker = crate::pmem::broker::start_in_daemon(&self.cfg, self.opts.dry_run)?;
        let tick = self.cfg.daemon.tick.0;
        let facts = self.observer.host_facts(&self.cfg)?;
        tracing::info!(
            "memext daemon: cgroup {}, capacity {}, tick {:?}, poll {:?}{}",
            self.observer.host().hierarchy.version,
            crate::units::human_bytes(facts.capacity),
            tick,
            self.cfg.daemon.poll.0,
            if self.opts.dry_run { ", dry run" } else { "" }
        );
        if self.observer.host().hierarchy.version == memext_cgroup::Version::V1
            && !self.opts.dry_run
        {
            events::v1_hard_limits();
        }
        let mut supervisor = notify::Supervisor::from_env();
        supervisor.ready();
        let result = self.run_loop(stop, tick, &mut supervisor);
        supervisor.stopping();
        self.act.shutdown(&self.observer.host().hierarchy);
        self.save_model(true);
        listener.close();
        if let Some(m) = metrics {
            m.close();
        }
        if let Some(b) = broker {
            b.stop(&self.cfg.pmem.socket);
        }
        if self.opts.dry_run {
            tracing::info!("memext daemon stopped (dry run: nothing was changed)");
        } else {
            tracing::info!("memext daemon stopped; knobs restored");
        }
        result
    }

    fn run_loop(
        &mut self,
        stop: &AtomicBool,
        tick: std::time::Duration,
        supervisor: &mut notify::Supervisor,
    ) -> anyhow::Result<()> {
        let mut next_tick = self.now();
        let mut ticks = 0u64;
        while !stop.load(Ordering::Relaxed) {
            supervisor.alive();
            if std::mem::take(&mut self.tick_now) {
                // Room a waiting wake needed came free: served now, not
                // up to a tick later (the schedule of ticks is kept).
                self.tick()?;
            } else if self.now() >= next_tick {
                self.tick()?;
                ticks += 1;
                if self.opts.ticks.is_some_and(|n| ticks >= n) {
                    break;
                }
                next_tick += tick;
            } else {
                // The event observer blocks until its deadline: never past
                // the watchdog's next ping (the supervisor pings at half the
                // watchdog interval, 0.5 s at the shortest a test uses).
                self.between_ticks(next_tick.min(self.now() + MAX_BLOCK))?;
            }
        }
        Ok(())
    }

    /// One full cycle: observe every context, decide, act, publish.
    fn tick(&mut self) -> anyhow::Result<()> {
        let (t0, reads0) = (std::time::Instant::now(), memext_cgroup::reads());
        self.sync_contexts()?;
        self.tell_foretold();
        let t_sync = t0.elapsed();
        self.observe_all()?;
        let t_observe = t0.elapsed();
        self.collect_accuracy();
        self.settle_reclaims();
        let now = self.now();
        let facts = self.observer.host_facts(&self.cfg)?;
        let act = &self.act;
        let d = self.engine.decide(now, &facts, &|id| act.is_busy(id));
        let t_decide = t0.elapsed();
        self.gauges
            .capacity_bytes
            .store(facts.capacity, Ordering::Relaxed);
        if let Some(hits) = self.cap.as_ref().and_then(|c| c.limit_hits().ok()) {
            self.gauges
                .capacity_limit_hits
                .store(hits, Ordering::Relaxed);
            self.gauges.capacity_watched.store(true, Ordering::Relaxed);
        }
        self.gauges.ticks.fetch_add(1, Ordering::Relaxed);
        if d.plan.overcommitted {
            events::overcommitted();
        }
        events::room(&d.plan.room, None);
        if let Some(g) = &self.move_group {
            match g.switch(d.critical_runs) {
                Ok(true) => events::move_group(d.critical_runs, g.dir()),
                Ok(false) => {}
                Err(e) => tracing::warn!("the moves' group at {}: {e}", g.dir().display()),
            }
        }
        if self
            .gauges
            .throttled
            .swap(d.plan.throttle, Ordering::Relaxed)
            != d.plan.throttle
        {
            events::throttle(d.plan.throttle, &d.pressed);
        }
        if self.act.is_dry_run() {
            let states: Vec<(ContextId, String)> = self
                .engine
                .contexts()
                .map(|t| (t.id.clone(), t.model.state.to_string()))
                .collect();
            self.act.print_plan(&d.plan.actions, &states);
        } else {
            self.dirty |= d
                .commands
                .iter()
                .any(|c| matches!(c, Command::BringBack(_) | Command::PushOut(_)));
            self.execute(&d.commands);
            self.save_model(false);
        }
        let t_act = t0.elapsed();
        self.rewatch = true;
        self.publish();
        tracing::debug!(
            elapsed_ms = t0.elapsed().as_secs_f64() * 1e3,
            ?t_sync,
            ?t_observe,
            ?t_decide,
            ?t_act,
            reads = memext_cgroup::reads() - reads0,
            commands = d.commands.len(),
            "tick"
        );
        Ok(())
    }

    /// Saves the engine's model when something changed, or `SAVE_EVERY`
    /// passed, or `always`; never in a dry run. A failed save is logged: the
    /// daemon goes on without it.
    fn save_model(&mut self, always: bool) {
        let now = self.now();
        let since = now.saturating_sub(self.last_save);
        let due = always || (self.dirty && since >= SAVE_DIRTY_EVERY) || since >= SAVE_EVERY;
        if self.act.is_dry_run() || !due {
            return;
        }
        match self.store.save(self.engine.contexts(), now) {
            Ok(()) => {
                self.dirty = false;
                self.last_save = now;
            }
            Err(e) => tracing::warn!(event = "model-save-failed", "{:#}", anyhow::Error::from(e)),
        }
    }

    /// Executes commands in order, each outcome reported to the engine; a
    /// context the engine let go of meanwhile (someone else's) is skipped.
    fn execute(&mut self, commands: &[Command]) {
        for cmd in commands {
            let id = cmd.id();
            let (Some(t), true) = (self.tracked.get(id), self.engine.contains(id)) else {
                continue;
            };
            // A context whose processes are being killed is never frozen: it
            // is on its way out, and its teardown is not a wake.
            let outcome = if matches!(cmd, Command::Freeze { frozen: true, .. })
                && self.observer.is_going(&t.cg)
            {
                Outcome::Failed
            } else {
                self.act.execute(cmd, &t.cg)
            };
            let moves_memory = match cmd {
                Command::Limit { bytes, .. } => {
                    self.engine.get(id).and_then(|t| t.limit) != Some(*bytes)
                }
                Command::PushOut(_) | Command::BringBack(_) | Command::Reclaim { .. } => true,
                _ => false,
            };
            if moves_memory && outcome == Outcome::Done {
                // What memext just changed is read at the next tick, even
                // where a kernel event guards the context (else its status
                // showed what it held before, for up to `idle_read`).
                if let Some(t) = self.tracked.get_mut(id) {
                    t.sampled = None;
                }
            }
            self.engine.executed(cmd, outcome, self.now());
            if outcome == Outcome::Foreign {
                self.tracked.remove(id);
            }
        }
    }

    /// Tells the engine which lowerings in the background ended, and where:
    /// only now is their room free. Each such context is read in full at
    /// the next tick.
    /// A wake waited for one of them: the next tick comes at once.
    fn settle_reclaims(&mut self) {
        let tracked = &self.tracked;
        let (ended, waited) = self.act.take_reclaimed(|id| tracked.get(id).map(|t| &t.cg));
        self.tick_now |= waited;
        let now = self.now();
        for (id, held) in ended {
            self.engine.reclaimed(&id, held, now);
            if let Some(t) = self.tracked.get_mut(&id) {
                t.sampled = None;
            }
        }
    }
}

/// Raises the soft limit of open files to the hard one: a kernel wake event
/// is one descriptor per idle context, and each context's cgroup directories
/// are held open.
fn raise_open_files() {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let mut l = getrlimit(Resource::Nofile);
    if l.current < l.maximum {
        l.current = l.maximum;
        if let Err(e) = setrlimit(Resource::Nofile, l) {
            tracing::warn!("cannot raise the open-files limit: {e}");
        }
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
