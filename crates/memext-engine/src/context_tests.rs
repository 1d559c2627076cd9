use super::*;
use crate::activity::Counters;

/// What the engine knows of a context can be saved and read back whole
/// (the daemon's state dir), working set and wake history included.
#[test]
fn a_context_state_survives_json() {
    let params = ClassParams {
        idle_after: Duration::from_secs(5),
        floor: 16 << 20,
        headroom_pct: 10,
        pageout_bandwidth: 1 << 28,
        prefetch_bandwidth: 1 << 29,
        map_back: true,
        map_kept: false,
        cpu_weight: Some(10),
        wake_cpu_weight: 30,
        resident_cpu_weight: None,
        cpu_max_milli: None,
        admit_within: Duration::from_secs(5),
        push_out: PushOutWhen::Needed,
        fast_wakes: true,
        keep_anon: false,
        wakes_at_once: None,
        cpu_idle: false,
        admit_at_peak: false,
    };
    let mut t = ContextState::new(
        ContextId::from("/a/b"),
        Class::Extend,
        params,
        Duration::ZERO,
    );
    t.ws.record(Duration::from_secs(1), 42, &[(0, 6 << 20)]);
    for s in [0, 1, 9, 20] {
        let c = Counters {
            at: Duration::from_secs(s),
            cpu: Duration::from_secs(s),
            ..Default::default()
        };
        t.model.observe(c, &t.params.model());
    }
    t.held = Some((Duration::from_secs(30), PrefetchReason::Periodic));
    let text = serde_json::to_string(&t).expect("serialize");
    let back: ContextState = serde_json::from_str(&text).expect("deserialize");
    assert_eq!(back.ws, t.ws);
    assert_eq!(back.model.history, t.model.history);
    assert_eq!((back.held, back.params, back.id), (t.held, t.params, t.id));
}
