//! The event-driven observer on this host's real cgroups (v1 memory
//! controller): a usage threshold fires when a watched context starts using
//! memory, and idle contexts cost no reads between ticks, counted, where the
//! polling observer reads each of them every poll. Needs root.

use std::sync::Arc;
use std::time::Duration;

use memext::daemon::observe::{
    Host, MonotonicClock, Observer, PollingObserver, Seen, WakePath, Watched,
};
use memext::daemon::observe_events::EventObserver;
use memext_cgroup::{AnyCgroup, WakeSource};
use memext_e2e::toucher::Toucher;
use memext_e2e::{host_hierarchy, is_root, ScratchCgroup};
use memext_engine::ContextId;

const POLL: Duration = Duration::from_millis(20);

fn host() -> Host {
    assert!(is_root(), "real cgroups need root");
    Host {
        proc_root: "/proc".into(),
        hierarchy: host_hierarchy().expect("cgroup hierarchy"),
        clock: Arc::new(MonotonicClock::start()),
    }
}

/// Watches `contexts` until `secs` from now, calling `watch` as the daemon
/// does between ticks; returns everything seen.
fn watch_for(o: &mut dyn Observer, contexts: &[(ContextId, AnyCgroup)], secs: f64) -> Vec<Seen> {
    let watched: Vec<Watched<'_>> = contexts
        .iter()
        .map(|(id, cg)| Watched {
            id,
            cg,
            moving: false,
        })
        .collect();
    let clock = o.host().clock.clone();
    let deadline = clock.now() + Duration::from_secs_f64(secs);
    let mut seen = Vec::new();
    while clock.now() < deadline {
        seen.extend(o.watch(&watched, deadline));
    }
    seen
}

fn scratch(h: &memext_cgroup::Hierarchy, n: usize) -> Vec<(ScratchCgroup, ContextId)> {
    (0..n)
        .map(|i| {
            let s = ScratchCgroup::new(h, &format!("idle{i}")).expect("cgroup");
            let id = ContextId::new(s.path.as_str());
            (s, id)
        })
        .collect()
}

#[test]
fn a_usage_threshold_fires_when_a_watched_context_takes_memory() {
    let host = host();
    let h = host.hierarchy.clone();
    let s = ScratchCgroup::new(&h, "waker").expect("cgroup");
    let mut t = Toucher::spawn(
        std::path::Path::new(env!("CARGO_BIN_EXE_memext-e2e")),
        16 << 20,
    )
    .expect("toucher");
    s.attach(t.pid()).expect("attach");
    let ctx = vec![(ContextId::new(s.path.as_str()), s.open().expect("open"))];
    let mut o = EventObserver::new(host, POLL).expect("observer");
    // Arming reads the context once; then nothing happens for half a second.
    let first = watch_for(&mut o, &ctx, 0.5);
    assert!(first.iter().all(|s| matches!(s, Seen::Cpu(_))), "{first:?}");
    assert_eq!(
        o.wake_path(&ctx[0].0),
        WakePath::Event(WakeSource::UsageThreshold)
    );
    t.alloc().expect("alloc");
    let after = watch_for(&mut o, &ctx, 0.3);
    // Fired once; the next watch placed it anew above the new usage (one
    // reading), and it stayed quiet since.
    assert_eq!(
        after.first(),
        Some(&Seen::Fired(ctx[0].0.clone())),
        "{after:?}"
    );
    assert_eq!(after.len(), 2, "{after:?}");
    assert!(matches!(after[1], Seen::Cpu(_)), "{after:?}");
    assert!(o.guarded(&ctx[0].0));
}

#[test]
fn idle_contexts_cost_no_reads_between_ticks_with_events() {
    const N: usize = 500;
    let host = host();
    let h = host.hierarchy.clone();
    let made = scratch(&h, N);
    let ctx: Vec<(ContextId, AnyCgroup)> = made
        .iter()
        .map(|(s, id)| (id.clone(), s.open().expect("open")))
        .collect();

    let mut events = EventObserver::new(host, POLL).expect("observer");
    let armed = watch_for(&mut events, &ctx, 0.2);
    assert_eq!(armed.len(), N, "one reading per context as it is armed");
    let before = memext_cgroup::reads();
    let seen = watch_for(&mut events, &ctx, 1.0);
    let event_reads = memext_cgroup::reads() - before;

    let mut polling = PollingObserver::new(self::host(), POLL);
    let before = memext_cgroup::reads();
    watch_for(&mut polling, &ctx, 1.0);
    let polling_reads = memext_cgroup::reads() - before;
    eprintln!("{N} idle contexts over 1 s: events {event_reads} reads, polling {polling_reads}");
    assert!(seen.is_empty(), "{seen:?}");
    assert_eq!(event_reads, 0);
    assert!(polling_reads >= N as u64 * 10, "{polling_reads}");
}
