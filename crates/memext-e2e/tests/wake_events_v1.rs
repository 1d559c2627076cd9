//! The event-driven observer on this host's real cgroups (v1 memory
//! controller): a usage threshold fires when a watched context starts using
//! memory, and idle contexts cost no reads between ticks, counted, where the
//! polling observer reads each of them every poll. Needs root.

use std::sync::Arc;
use std::time::Duration;

use memext::daemon::observe::{
    Host, MonotonicClock, Observer, PollingObserver, Seen, WakePath, Watched,
};
use memext::daemon::observe_events::{EventObserver, WAKE_DELTA};
use memext_cgroup::{AnyCgroup, Limit, LimitKnob, MemoryCgroup, WakeSource};
use memext_e2e::sandbox::TierSandbox;
use memext_e2e::toucher::Toucher;
use memext_e2e::{host_hierarchy, is_root, ScratchCgroup};
use memext_engine::ContextId;

const POLL: Duration = Duration::from_millis(20);

/// Swap is machine-wide: the tests here run one at a time.
static MACHINE: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    MACHINE.lock().unwrap_or_else(|p| p.into_inner())
}

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
    let watched = watched(contexts);
    let clock = o.host().clock.clone();
    let deadline = clock.now() + Duration::from_secs_f64(secs);
    let mut seen = Vec::new();
    while clock.now() < deadline {
        seen.extend(o.watch(&watched, deadline));
    }
    seen
}

/// One `watch` call over `contexts`, with a deadline 50 ms away.
fn watch_once(o: &mut dyn Observer, contexts: &[(ContextId, AnyCgroup)]) -> Vec<Seen> {
    let deadline = o.host().clock.now() + Duration::from_millis(50);
    o.watch(&watched(contexts), deadline)
}

/// `contexts` as the daemon gives them to watch: resting, not polled.
fn watched(contexts: &[(ContextId, AnyCgroup)]) -> Vec<Watched<'_>> {
    contexts
        .iter()
        .map(|(id, cg)| Watched {
            id,
            cg,
            poll: false,
            usage: 0,
        })
        .collect()
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

/// Arms the context's event (one CPU reading) and watches it for half a
/// second in which nothing happens: nothing but that reading is seen.
fn arm_quietly(o: &mut EventObserver, ctx: &[(ContextId, AnyCgroup)]) {
    let quiet = watch_for(o, ctx, 0.5);
    assert!(quiet.iter().all(|s| matches!(s, Seen::Cpu(_))), "{quiet:?}");
}

/// Watches for 0.3 s: the first thing seen is the context's event firing.
fn assert_fired(o: &mut EventObserver, ctx: &[(ContextId, AnyCgroup)]) -> Vec<Seen> {
    let after = watch_for(o, ctx, 0.3);
    assert_eq!(
        after.first(),
        Some(&Seen::Fired(ctx[0].0.clone())),
        "{after:?}"
    );
    after
}

/// A scratch cgroup with a toucher of `bytes` in it (not allocated yet).
fn toucher_in(host: &Host, label: &str, bytes: usize) -> (ScratchCgroup, Toucher) {
    let s = ScratchCgroup::new(&host.hierarchy, label).expect("cgroup");
    let t = Toucher::spawn(
        std::path::Path::new(env!("CARGO_BIN_EXE_memext-e2e")),
        bytes,
    )
    .expect("toucher");
    s.attach(t.pid()).expect("attach");
    (s, t)
}

#[test]
fn a_usage_threshold_fires_when_a_watched_context_takes_memory() {
    let _g = serial();
    let host = host();
    let (s, mut t) = toucher_in(&host, "waker", 16 << 20);
    let ctx = vec![(ContextId::new(s.path.as_str()), s.open().expect("open"))];
    let mut o = EventObserver::new(host, POLL).expect("observer");
    arm_quietly(&mut o, &ctx);
    assert_eq!(
        o.wake_path(&ctx[0].0),
        WakePath::Event(WakeSource::UsageThreshold)
    );
    t.alloc().expect("alloc");
    let after = assert_fired(&mut o, &ctx);
    // Fired once; the next watch placed it anew above the new usage (polled
    // until the arming threads had it in place, then one reading), and it
    // stayed quiet since.
    assert!(after.len() >= 2, "{after:?}");
    assert!(
        after[1..].iter().all(|s| matches!(s, Seen::Cpu(_))),
        "{after:?}"
    );
    assert!(o.guarded(&ctx[0].0));
}

/// A pushed-out context is held at its floor: it cannot grow past its limit,
/// so no usage threshold above it is ever crossed; the faults it takes there
/// make the kernel reclaim in it, and `memory.pressure_level` fires.
#[test]
fn a_context_held_at_its_limit_wakes_through_its_pressure_level() {
    let _g = serial();
    let tiers = TierSandbox::new(
        "wake-events",
        "[[tiers.swapfile]]\npath = \"@DIR@/swap0\"\nsize = \"256MiB\"\npriority = 10\n",
    );
    tiers.up();
    let host = host();
    let (s, mut t) = toucher_in(&host, "held", 32 << 20);
    t.alloc().expect("alloc");
    let cg = s.open().expect("open");
    cg.write_limit(LimitKnob::V1Limit, Limit::Bytes(4 << 20))
        .expect("limit at a floor");
    let usage = cg.memory().expect("memory").usage_bytes;
    assert!(
        usage + WAKE_DELTA > 4 << 20,
        "usage {usage}: a threshold would fit below the limit"
    );
    let ctx = vec![(ContextId::new(s.path.as_str()), cg)];
    let mut o = EventObserver::new(host, POLL).expect("observer");
    arm_quietly(&mut o, &ctx);
    t.touch().expect("touch");
    assert_fired(&mut o, &ctx);
}

#[test]
fn idle_contexts_cost_no_reads_between_ticks_with_events() {
    const N: usize = 500;
    let _g = serial();
    let host = host();
    let h = host.hierarchy.clone();
    let made = scratch(&h, N);
    let ctx: Vec<(ContextId, AnyCgroup)> = made
        .iter()
        .map(|(s, id)| (id.clone(), s.open().expect("open")))
        .collect();

    let mut events = EventObserver::new(host, POLL).expect("observer");
    // Armed by the arming threads (each context polled until its
    // threshold is in place, then read once): the loop's first watch asks
    // for all of them and returns at once (each registration waits for an
    // RCU grace period: 500 in the loop held it for seconds).
    let t0 = std::time::Instant::now();
    let mut armed = watch_once(&mut events, &ctx);
    let first = t0.elapsed();
    assert!(
        first < Duration::from_secs(1),
        "the first watch took {first:?}"
    );
    while !ctx.iter().all(|(id, _)| events.guarded(id)) {
        assert!(t0.elapsed() < Duration::from_secs(30), "not all armed");
        armed.extend(watch_for(&mut events, &ctx, 0.1));
    }
    eprintln!(
        "{N} contexts armed in {:.2} s, the first watch returned after {:.3} s",
        t0.elapsed().as_secs_f64(),
        first.as_secs_f64()
    );
    assert!(armed.len() >= N, "a reading per context at least");
    assert!(ctx
        .iter()
        .all(|(id, _)| events.wake_path(id) == WakePath::Event(WakeSource::UsageThreshold)));
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
