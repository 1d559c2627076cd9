//! The engine on simulated traces: model, predictor and planner together,
//! tick by tick, as the daemon drives them. Each workload is a schedule of
//! busy periods; a busy context uses 20% of a CPU.

use std::time::Duration;

use memext_engine::activity::Counters;
use memext_engine::model::{ContextModel, ModelParams, State};
use memext_engine::planner::{plan, Action, ContextInput, Plan, PlanInput};
use memext_engine::predict::{decide, PredictParams, PrefetchReason};
use memext_engine::Class;

const MIB: u64 = 1 << 20;
const TICK: f64 = 0.1;

struct Workload {
    key: &'static str,
    class: Class,
    /// Busy intervals [from, to) in seconds.
    busy: Vec<(f64, f64)>,
    ws_mib: u64,
    pressure_from: Option<f64>,
}

struct Sim {
    loads: Vec<Workload>,
    models: Vec<ContextModel>,
    cpu: Vec<Duration>,
    /// Whether each context's memory is out (pushed, not yet brought back).
    out: Vec<bool>,
    capacity: u64,
    log: Vec<(f64, Plan)>,
}

impl Sim {
    fn new(loads: Vec<Workload>, capacity_mib: u64) -> Self {
        let n = loads.len();
        Sim {
            loads,
            models: (0..n).map(|_| ContextModel::new(Duration::ZERO)).collect(),
            cpu: vec![Duration::ZERO; n],
            out: vec![false; n],
            capacity: capacity_mib * MIB,
            log: Vec::new(),
        }
    }

    fn run(&mut self, until: f64) {
        let mp = ModelParams {
            idle_after: Duration::from_secs(5),
            settle: Duration::from_secs(1),
            ..Default::default()
        };
        let pp = PredictParams::default();
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // small, positive
        let steps = (until / TICK).round() as u64;
        for step in 0..=steps {
            let t = step as f64 * TICK;
            let now = Duration::from_secs_f64(t);
            for (i, w) in self.loads.iter().enumerate() {
                if w.busy.iter().any(|&(a, b)| t >= a && t < b) {
                    self.cpu[i] += Duration::from_secs_f64(0.2 * TICK);
                }
                self.models[i].observe(
                    Counters {
                        at: now,
                        cpu: self.cpu[i],
                        ..Default::default()
                    },
                    &mp,
                );
            }
            let refs: Vec<&ContextModel> = self.models.iter().collect();
            let prefetch = decide(now, &refs, &pp);
            let contexts = self
                .loads
                .iter()
                .enumerate()
                .map(|(i, w)| {
                    let ws = w.ws_mib * MIB;
                    ContextInput {
                        key: w.key.into(),
                        class: w.class,
                        state: self.models[i].state,
                        usage: if self.out[i] { 32 * MIB } else { ws },
                        working_set: ws,
                        swapped: if self.out[i] { ws - 32 * MIB } else { 0 },
                        floor: 32 * MIB,
                        headroom_pct: 10,
                        under_pressure: w.pressure_from.is_some_and(|p| t >= p),
                        prefetch: prefetch[i],
                        queued: None,
                        keep_while_room: false,
                        quiet: false,
                        expected_wake_in: None,
                        growth: memext_engine::planner::GROWTH_BYTES,
                        rest_slack: memext_engine::planner::REST_SLACK_BYTES,
                        peak: 0,
                        in_turn: None,
                    }
                })
                .collect();
            let p = plan(&PlanInput {
                capacity: self.capacity,
                contexts,
            });
            for a in &p.actions {
                let i = self
                    .loads
                    .iter()
                    .position(|w| w.key == a.key().as_str())
                    .expect("known key");
                match a {
                    Action::PushOut { .. } => self.out[i] = true,
                    Action::BringBack { .. } => self.out[i] = false,
                    _ => {}
                }
            }
            self.log.push((t, p));
        }
    }

    /// Times at which an action matching `f` was planned.
    fn when(&self, f: impl Fn(&Action) -> bool) -> Vec<f64> {
        self.log
            .iter()
            .filter(|(_, p)| p.actions.iter().any(&f))
            .map(|(t, _)| *t)
            .collect()
    }
}

fn push_out(key: &'static str) -> impl Fn(&Action) -> bool {
    move |a| matches!(a, Action::PushOut { key: k, .. } if k.as_str() == key)
}

fn bring_back(key: &'static str, reason: PrefetchReason) -> impl Fn(&Action) -> bool {
    move |a| matches!(a, Action::BringBack { key: k, reason: r } if k.as_str() == key && *r == reason)
}

#[test]
fn a_container_that_sleeps_and_wakes() {
    let mut sim = Sim::new(
        vec![Workload {
            key: "app",
            class: Class::Extend,
            busy: vec![(0.0, 3.0), (20.0, 25.0)],
            ws_mib: 512,
            pressure_from: None,
        }],
        4096,
    );
    sim.run(30.0);
    let out = sim.when(push_out("app"));
    // Last busy sample at 2.9 s, idle after 5 s.
    assert!((7.8..8.1).contains(&out[0]), "pushed out at {out:?}");
    let back = sim.when(bring_back("app", PrefetchReason::Woke));
    assert!(
        !back.is_empty() && back[0] <= 20.2,
        "brought back at {back:?}: within two ticks of waking"
    );
    assert!(back[0] >= 20.0);
}

#[test]
fn a_container_that_wakes_every_30_s_is_back_before_it_wakes() {
    let busy: Vec<(f64, f64)> = (0..7)
        .map(|k| (10.0 + 30.0 * f64::from(k), 11.0 + 30.0 * f64::from(k)))
        .collect();
    let mut sim = Sim::new(
        vec![Workload {
            key: "cron",
            class: Class::Extend,
            busy,
            ws_mib: 256,
            pressure_from: None,
        }],
        4096,
    );
    sim.run(200.0);
    // From the fifth wake on (four intervals known), the bring-back comes
    // before the wake at 160 s and 190 s.
    let periodic = sim.when(bring_back("cron", PrefetchReason::Periodic));
    for wake in [160.0, 190.0] {
        assert!(
            periodic.iter().any(|&t| t < wake && t >= wake - 3.5),
            "no periodic bring-back in the 3 s before {wake}: {periodic:?}"
        );
    }
    // Between wakes it is pushed out again.
    assert!(sim
        .when(push_out("cron"))
        .iter()
        .any(|&t| t > 165.0 && t < 190.0));
}

#[test]
fn two_that_wake_together_the_follower_comes_back_with_the_leader() {
    // Irregular wakes (no period to predict), the follower always 1 s after.
    let lead: Vec<(f64, f64)> = [10.0, 45.0, 95.0, 130.0, 175.0]
        .iter()
        .map(|&a| (a, a + 2.0))
        .collect();
    let follow: Vec<(f64, f64)> = lead.iter().map(|&(a, b)| (a + 1.0, b + 1.0)).collect();
    let mut sim = Sim::new(
        vec![
            Workload {
                key: "front",
                class: Class::Extend,
                busy: lead,
                ws_mib: 128,
                pressure_from: None,
            },
            Workload {
                key: "db",
                class: Class::Extend,
                busy: follow,
                ws_mib: 512,
                pressure_from: None,
            },
        ],
        4096,
    );
    sim.run(200.0);
    // Once "db" has followed three of front's wakes (at its rate, a wake
    // in the second after each by chance is unlikely: one in ten thousand),
    // front's wake brings db back before db's own one second later (at
    // 130 s and 175 s); after only two (at 95 s), not yet.
    let followed = sim.when(bring_back("db", PrefetchReason::FollowsLeader));
    for wake in [130.0, 175.0] {
        assert!(
            followed.iter().any(|&t| (wake..wake + 1.0).contains(&t)),
            "{wake}: {followed:?}"
        );
    }
    assert!(!followed.iter().any(|&t| t < 100.0), "{followed:?}");
}

#[test]
fn a_critical_one_under_pressure_throttles_and_is_never_pushed() {
    let mut sim = Sim::new(
        vec![
            Workload {
                key: "redis",
                class: Class::Critical,
                busy: vec![(0.0, 2.0)],
                ws_mib: 1024,
                pressure_from: Some(10.0),
            },
            Workload {
                key: "noise",
                class: Class::Extend,
                busy: vec![(0.0, 1.0)],
                ws_mib: 512,
                pressure_from: None,
            },
        ],
        2048,
    );
    sim.run(20.0);
    assert!(sim.when(push_out("redis")).is_empty());
    assert!(sim.log.iter().all(|(t, p)| p.throttle == (*t >= 10.0)));
    assert!(
        sim.models[0].state == State::Idle,
        "even idle, the critical context keeps its memory"
    );
    let last = &sim.log.last().expect("ticks").1;
    assert!(last.targets[0] >= 1024 * MIB);
}

#[test]
fn capacity_smaller_than_the_working_sets() {
    let busy = vec![(0.0, 100.0)];
    let loads = vec![
        Workload {
            key: "crit",
            class: Class::Critical,
            busy: busy.clone(),
            ws_mib: 600,
            pressure_from: None,
        },
        Workload {
            key: "a",
            class: Class::Extend,
            busy: busy.clone(),
            ws_mib: 600,
            pressure_from: None,
        },
        Workload {
            key: "b",
            class: Class::Extend,
            busy,
            ws_mib: 600,
            pressure_from: None,
        },
    ];
    let mut sim = Sim::new(loads, 1024);
    sim.run(3.0);
    let last = &sim.log.last().expect("ticks").1;
    assert!(!last.overcommitted);
    assert_eq!(
        last.targets[0],
        660 * MIB,
        "critical gets its working set plus 10%"
    );
    assert_eq!(
        last.targets.iter().sum::<u64>(),
        1024 * MIB,
        "the rest is shared out to the last byte"
    );
    assert_eq!(last.targets[1], last.targets[2]);
}
