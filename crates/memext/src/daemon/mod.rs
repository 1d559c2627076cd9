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
use memext_cgroup::{AnyCgroup, CgroupError, LimitKnob};
use memext_engine::context::ContextState;
use memext_engine::engine::{Command, Engine, EngineParams, Outcome};
use memext_engine::{ContextId, Instant};

use crate::config::{Class, Config};
use crate::contexts::MemoryContext;

pub mod act;
pub mod events;
mod idle_cpu;
pub mod ledger;
mod ledger_store;
pub mod metrics;
pub mod model_store;
pub mod mover;
mod notify;
pub mod observe;
pub mod observe_events;
mod pages;
pub mod reclaim;
pub mod serve;
pub mod wake_gate;

use act::Actuator;
use ledger::{KnobRecord, Ledger};
use model_store::ModelStore;
use mover::Mover;
use observe::{touch_ask, Host, Observer, PollingObserver, Seen, Watched};
use observe_events::EventObserver;
use serve::{ContextReport, Reports};

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
        let observer: Box<dyn Observer> = match cfg.daemon.observer {
            crate::config::ObserverKind::Events => {
                raise_open_files();
                Box::new(EventObserver::new(host, cfg.daemon.poll.0)?)
            }
            crate::config::ObserverKind::Polling => {
                Box::new(PollingObserver::new(host, cfg.daemon.poll.0))
            }
        };
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
            self.act.start_mover(Mover::start(gate.clone()));
            if self.cfg.daemon.reclaim.in_background() {
                let h = self.observer.host().hierarchy.clone();
                let page_out = self.cfg.daemon.reclaim == crate::config::ReclaimIn::PageOut;
                // Not yielding: a gate of its own, never closed.
                let gate = if self.cfg.daemon.yield_to_wakes {
                    gate
                } else {
                    wake_gate::WakeGate::default()
                };
                self.act
                    .start_reclaimer(reclaim::Reclaimer::start(h, page_out, gate));
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

    /// Brings the tracked set in line with what discovery finds now (nothing
    /// to do when the observer knows the tree has not changed).
    fn sync_contexts(&mut self) -> anyhow::Result<()> {
        let now = self.now();
        let Some(found) = self.observer.discover_changes(&self.cfg)? else {
            return Ok(());
        };
        let mut seen = std::collections::HashSet::new();
        for ctx in found.into_iter().filter(|c| c.class != Class::Ignore) {
            let id = ContextId::new(ctx.path.as_str());
            if self.act.ledger().is_foreign(&ctx.path) || self.engine.is_left_alone(&id) {
                continue;
            }
            seen.insert(id.clone());
            if self.tracked.contains_key(&id) {
                continue;
            }
            let Some(params) = self.cfg.params(ctx.class) else {
                continue;
            };
            let params = pod_params(&self.cfg, &ctx, params);
            let cg = match self.observer.host().hierarchy.open(&ctx.path) {
                Ok(cg) => cg,
                Err(CgroupError::Vanished { .. }) => continue,
                Err(e) => return Err(e.into()),
            };
            let class = match ctx.class {
                Class::Critical => memext_engine::Class::Critical,
                _ => memext_engine::Class::Extend,
            };
            events::tracking(&ctx);
            match self.saved.remove(&id) {
                Some(state) => {
                    let (out, wakes, ws) =
                        (state.out, state.model.history.count(), state.ws.bytes());
                    self.engine.resume(state, class, params.engine());
                    events::resumed(&id, out, wakes, ws);
                }
                None => {
                    self.engine.track(id.clone(), class, params.engine(), now);
                }
            }
            self.tracked.insert(
                id,
                Tracked {
                    ctx,
                    cg,
                    sampled: None,
                },
            );
        }
        let gone: Vec<ContextId> = self
            .tracked
            .keys()
            .filter(|id| !seen.contains(*id))
            .cloned()
            .collect();
        for id in gone {
            events::gone(&id);
            self.drop_context(&id);
        }
        Ok(())
    }

    /// A context leaves the engine (its cgroup is gone, or no longer
    /// selected); its knobs are released.
    fn drop_context(&mut self, id: &ContextId) {
        self.tracked.remove(id);
        self.engine.forget(id);
        self.act.release(&self.observer.host().hierarchy, id);
    }

    /// One full cycle: observe every context, decide, act, publish.
    fn tick(&mut self) -> anyhow::Result<()> {
        let (t0, reads0) = (std::time::Instant::now(), memext_cgroup::reads());
        self.sync_contexts()?;
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
        self.gauges.ticks.fetch_add(1, Ordering::Relaxed);
        if d.plan.overcommitted {
            events::overcommitted();
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

    /// Samples the tracked contexts into the engine: every one, except that
    /// an idle one a kernel wake event guards is sampled only every
    /// `daemon.idle_read` (its event brings it here when it touches memory);
    /// in between, a tick checks only its CPU time (one read of a held-open
    /// file, or none when its parent's CPU time shows that nothing below it
    /// ran: [`idle_cpu`]), so that a wake that runs before it touches its
    /// pages is seen within a tick.
    fn observe_all(&mut self) -> anyhow::Result<()> {
        let now = self.now();
        let idle_read = self.cfg.daemon.idle_read.0;
        let (full, cpu_only): (Vec<ContextId>, Vec<ContextId>) =
            self.tracked.keys().cloned().partition(|id| {
                !self.observer.guarded(id)
                    || self.tracked[id]
                        .sampled
                        .is_none_or(|at| now.saturating_sub(at) >= idle_read)
            });
        for id in full {
            if let Some(tr) = self.observe_one(&id, false)? {
                self.on_transition(&id, tr, "tick");
            }
        }
        self.idle_cpu.begin_tick();
        let hierarchy = &self.observer.host().hierarchy;
        let mut woke = Vec::new();
        for id in cpu_only {
            let t = &self.tracked[&id];
            let cpu = self.idle_cpu.cpu(hierarchy, &id, &t.ctx.path, &t.cg);
            let mut ask = touch_ask(self.observer.as_ref(), self.cfg.daemon.touches, &t.cg);
            match cpu.and_then(|cpu| self.engine.poll_asking(&id, now, cpu, &mut ask)) {
                Some(tr) => woke.push((id, tr)),
                None => self.note_rested(&id, "tick", now),
            }
        }
        self.idle_cpu.end_tick();
        for (id, tr) in woke {
            self.on_transition(&id, tr, "tick");
        }
        let tracked: Vec<(&ContextId, &AnyCgroup)> =
            self.tracked.iter().map(|(id, t)| (id, &t.cg)).collect();
        let waiting = self.observer.out_of_memory(&tracked);
        for id in waiting {
            self.serve_out_of_memory(&id)?;
        }
        Ok(())
    }

    /// Samples one context into the engine (a context whose cgroup is gone
    /// is dropped); records the working set the engine asks for. `fired`:
    /// read because its kernel event fired.
    fn observe_one(
        &mut self,
        id: &ContextId,
        fired: bool,
    ) -> anyhow::Result<Option<memext_engine::model::Transition>> {
        let Some(t) = self.tracked.get(id) else {
            return Ok(None);
        };
        let sample = match self.observer.sample(&t.cg) {
            Ok(s) => s,
            Err(CgroupError::Vanished { .. }) => {
                events::gone(id);
                self.drop_context(id);
                return Ok(None);
            }
            Err(e) => return Err(e.into()),
        };
        let (at, moving) = (sample.at, self.act.is_busy(id));
        if let Some(t) = self.tracked.get_mut(id) {
            t.sampled = Some(at);
        }
        let cg = &self.tracked[id].cg;
        let o = {
            let mut ask = touch_ask(self.observer.as_ref(), self.cfg.daemon.touches, cg);
            self.engine
                .observe_asking(id, sample, moving, fired, &mut ask)
        };
        if o.transition.is_none() {
            self.note_rested(id, if fired { "event" } else { "tick" }, at);
        }
        if o.wants_working_set {
            let pids = self
                .engine
                .get(id)
                .map(|t| t.pids.clone())
                .unwrap_or_default();
            let snapshot = self.observer.working_set(&pids);
            self.engine.record_working_set(id, at, &snapshot);
        }
        Ok(o.transition)
    }

    /// `Engine::poll`, the observer asked what the context touched where
    /// its CPU says "call" (`memext_engine::touch`), with `daemon.touches`.
    fn poll_asking(
        &mut self,
        id: &ContextId,
        at: Instant,
        cpu: std::time::Duration,
    ) -> Option<memext_engine::model::Transition> {
        let cg = &self.tracked.get(id)?.cg;
        let mut ask = touch_ask(self.observer.as_ref(), self.cfg.daemon.touches, cg);
        self.engine.poll_asking(id, at, cpu, &mut ask)
    }

    /// Logs a resting context's reading that was no call (at debug level;
    /// at info level where its touch turned a call's CPU away: `no-call`).
    fn note_rested(&self, id: &ContextId, via: &'static str, at: Instant) {
        if let Some(t) = self.engine.get(id) {
            events::rested(id, via, t, at);
        }
    }

    fn on_transition(
        &mut self,
        id: &ContextId,
        tr: memext_engine::model::Transition,
        via: &'static str,
    ) {
        self.dirty = true;
        if let Some(t) = self.engine.get(id) {
            events::transition(id, tr, t.model.state, via, t.model.judged);
        }
        if tr == memext_engine::model::Transition::Woke {
            self.gauges.wakes.fetch_add(1, Ordering::Relaxed);
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

    /// Until the next tick: the observer watches the contexts the engine
    /// names; a wake it sees is served at once. While nothing changed since
    /// the observer was last given them, it may wait on its own.
    fn between_ticks(&mut self, deadline: Instant) -> anyhow::Result<()> {
        let quiet = if self.rewatch {
            None
        } else {
            self.observer.wait_events(deadline)
        };
        let seen = match quiet {
            Some(seen) => seen,
            None => self.watch(deadline),
        };
        self.rewatch |= !seen.is_empty();
        self.settle_reclaims();
        self.serve_seen(seen)
    }

    /// Gives the observer the contexts to watch (and how) and waits with it.
    fn watch(&mut self, deadline: Instant) -> Vec<Seen> {
        self.rewatch = false;
        let watched_ids = self.engine.watched();
        let watched: Vec<Watched<'_>> = watched_ids
            .iter()
            .filter_map(|id| {
                let t = self.engine.get(id)?;
                Some(Watched {
                    id,
                    cg: &self.tracked.get(id)?.cg,
                    // Polled until its limit is down at its target: until
                    // then its swap cache is still charged, so a threshold
                    // would sit above the usage it settles at, and no limit
                    // makes it reclaim (its pressure level stays silent).
                    poll: self.act.is_busy(id)
                        || t.held.is_some()
                        || t.applied.limit.is_none_or(|(b, _)| b > t.target),
                    usage: t.memory.usage,
                })
            })
            .collect();
        self.observer.watch(&watched, deadline)
    }

    /// Serves what the observer saw: a wake is served at once.
    fn serve_seen(&mut self, seen: Vec<Seen>) -> anyhow::Result<()> {
        for s in seen {
            use memext_engine::model::Transition;
            let (id, via, tr) = match s {
                Seen::Cpu(r) => match self.poll_asking(&r.id, r.at, r.cpu) {
                    // A warm call is only remembered: nothing to serve.
                    Some(Transition::WarmCall) => {
                        self.on_transition(&r.id, Transition::WarmCall, "poll");
                        continue;
                    }
                    Some(tr) => (r.id, "poll", tr),
                    None => {
                        self.note_rested(&r.id, "poll", r.at);
                        continue;
                    }
                },
                Seen::OutOfMemory(id) => {
                    self.serve_out_of_memory(&id)?;
                    continue;
                }
                // The kernel says it is using memory again: a full sample
                // tells the engine whether that is a wake (or an onset).
                Seen::Fired(id) => match self.observe_one(&id, true)? {
                    Some(tr @ (Transition::Woke | Transition::Onset)) => (id, "event", tr),
                    Some(tr) => {
                        self.on_transition(&id, tr, "event");
                        continue;
                    }
                    None => {
                        tracing::debug!(context = %id, "kernel event, no wake");
                        continue;
                    }
                },
            };
            self.on_transition(&id, tr, via);
            // Host facts only now: a reading with no wake reads nothing more.
            let facts = self.observer.host_facts(&self.cfg)?;
            let act = &self.act;
            let at = self.now();
            let commands = self
                .engine
                .serve_wake(&id, at, &facts, &|id| act.is_busy(id));
            if !self.act.is_dry_run() {
                self.execute(&commands);
            }
        }
        Ok(())
    }

    /// The kernel said a task of `id` waits in the OOM wait at its limit:
    /// if it still does (the event also comes when the cgroup is removed,
    /// and a raise since, a wake's, has let it go), a fresh sample (its
    /// usage now), then its limit raised past where it waits, as the engine
    /// says (and its wake served, if it rested).
    fn serve_out_of_memory(&mut self, id: &ContextId) -> anyhow::Result<()> {
        let Some(t) = self.tracked.get(id) else {
            return Ok(());
        };
        match t.cg.under_oom() {
            Ok(true) => {}
            Ok(false) => return Ok(()),
            Err(CgroupError::Vanished { .. }) => {
                events::gone(id);
                self.drop_context(id);
                return Ok(());
            }
            Err(e) => {
                tracing::warn!(context = %id, "under_oom: {:#}", anyhow::Error::from(e));
                return Ok(());
            }
        }
        let sampled = self.observe_one(id, true)?;
        if let Some(tr) = sampled {
            self.on_transition(id, tr, "event");
        }
        let facts = self.observer.host_facts(&self.cfg)?;
        let at = self.now();
        let act = &self.act;
        let (tr, commands) = self
            .engine
            .out_of_memory(id, at, sampled, &facts, &|id| act.is_busy(id));
        if let Some(tr) = tr {
            self.on_transition(id, tr, "oom");
        }
        let raised = commands.iter().find_map(|c| match c {
            Command::Limit { id: i, bytes } if i == id => Some(*bytes),
            _ => None,
        });
        let dry = self.act.is_dry_run();
        events::out_of_memory(id, raised.filter(|_| !dry));
        if !dry {
            self.execute(&commands);
        }
        Ok(())
    }

    fn collect_accuracy(&mut self) {
        let Some(m) = self.act.mover() else { return };
        let window = self.cfg.daemon.accuracy_window.0;
        let due: Vec<(ContextId, Vec<(u32, memext_sys::AddrRange)>)> = match m.stats.lock() {
            Ok(mut s) => s
                .iter_mut()
                .filter_map(|(k, st)| {
                    let (at, _) = st.last_bring_back.as_ref()?;
                    (at.elapsed() >= window).then(|| {
                        let ranges = st.last_bring_back.take().map(|(_, r)| r);
                        (k.clone(), ranges.unwrap_or_default())
                    })
                })
                .collect(),
            Err(_) => return,
        };
        for (id, ranges) in due {
            if let Some(a) = pages::accuracy(&ranges) {
                self.engine.set_accuracy(&id, a);
            }
        }
    }

    /// Publishes the engine's typed state for status and metrics.
    fn publish(&self) {
        if let Some(m) = self.act.mover() {
            m.retain(|id| self.engine.contains(id));
        }
        let now = self.now();
        let stats = self
            .act
            .mover()
            .and_then(|m| m.stats.lock().ok().map(|s| s.clone()))
            .unwrap_or_default();
        let watched: std::collections::HashSet<ContextId> =
            self.engine.watched().into_iter().collect();
        let reports = self
            .engine
            .contexts()
            .filter_map(|t| {
                let ctx = &self.tracked.get(&t.id)?.ctx;
                let s = stats.get(&t.id).cloned().unwrap_or_default();
                Some(ContextReport {
                    id: ctx.identity.id.clone(),
                    runtime: ctx.identity.runtime,
                    name: ctx.name.clone(),
                    class: t.class,
                    cgroup: t.id.clone(),
                    state: t.model.state,
                    target_bytes: t.target,
                    usage_bytes: t.memory.usage,
                    resident_bytes: t.memory.resident,
                    swapped_bytes: t.memory.swapped,
                    working_set_bytes: t.working_set_bytes(),
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
                    held: t.held.is_some(),
                    waiting: t.frozen,
                    wake_path: watched
                        .contains(&t.id)
                        .then(|| self.observer.wake_path(&t.id).to_string()),
                    limit_bytes: t.limit,
                    reclaiming_to: t.reclaiming,
                    quiet: t.is_quiet(now),
                    margin_bytes: t.growth.margin(),
                    rest_slack_bytes: t.rest_growth.rest_slack(),
                })
            })
            .collect();
        if let Ok(mut r) = self.reports.lock() {
            *r = reports;
        }
        self.gauges
            .owned_knobs
            .store(self.act.ledger().records().len(), Ordering::Relaxed);
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

/// A context's class parameters: the policy's, under a Kubernetes pod's own
/// `memext.io/*` annotations where the policy lets them count; annotations
/// left out are said once, when the context is first tracked.
fn pod_params(
    cfg: &crate::config::Config,
    ctx: &crate::contexts::MemoryContext,
    params: &crate::config::ClassParams,
) -> crate::config::ClassParams {
    let Some(pod) = ctx.pod.as_ref().filter(|_| cfg.runtimes.pod_annotations) else {
        return params.clone();
    };
    for problem in &pod.problems {
        tracing::warn!(context = %ctx.path, "{}: annotation left out: {problem}", ctx.path);
    }
    pod.overrides.resolve(params.clone())
}
