//! `relay`: a context's memory mapped as huge pages once, after its first
//! wake, when it rests again on a swap file (`engine_relay`).

use super::*;

fn relaying() -> EngineParams {
    EngineParams {
        relay: true,
        ..params()
    }
}

fn relays(cmds: &[Command]) -> Vec<&BringBack> {
    bring_backs(cmds)
        .into_iter()
        .filter(|b| b.reason == PrefetchReason::Relay)
        .collect()
}

/// Ticks every second from `from` to `to` on `host`, every command done;
/// the relays sent, with the second each was sent at.
fn ticks_on(
    e: &mut Engine,
    c: &Ctx,
    from: u32,
    to: u32,
    host: &HostFacts,
) -> Vec<(u32, BringBack)> {
    let mut out = Vec::new();
    for i in from..=to {
        let at = f64::from(i);
        observe_all(e, &[c], at);
        let d = e.decide(s(at), host, &never_busy);
        for cmd in &d.commands {
            e.executed(cmd, Outcome::Done, s(at));
        }
        out.extend(relays(&d.commands).into_iter().map(|b| (i, b.clone())));
    }
    out
}

/// A 256 MiB context pushed out, woken between ticks at 9.5 s and read back
/// whole (its call ran 0.5 s): what the wake and the ticks from 10 s to
/// 30 s sent.
fn woken_once(e: &mut Engine, host: &HostFacts) -> (Ctx, Vec<(u32, BringBack)>) {
    woken_once_then(e, host, |_, _| {})
}

/// `woken_once`, with `after` done to the engine and the context once its
/// call has run, before the ticks.
fn woken_once_then(
    e: &mut Engine,
    host: &HostFacts,
    after: impl FnOnce(&mut Engine, &mut Ctx),
) -> (Ctx, Vec<(u32, BringBack)>) {
    let mut c = Ctx::new("/fn", 256);
    e.track(c.id.clone(), Class::Extend, class(16), s(0.0));
    for i in 0..=8 {
        tick(e, &[&c], f64::from(i));
    }
    assert!(e.get(&c.id).is_some_and(|t| t.out));
    c.swapped = 240 * MIB;
    c.usage = 16 * MIB;
    tick(e, &[&c], 9.0);
    poll_twice(e, &mut c, (9.5, 9.52), 10);
    let cmds = e.serve_wake(&c.id, s(9.52), host, &never_busy);
    assert!(relays(&cmds).is_empty(), "not at the wake: {cmds:?}");
    for cmd in &cmds {
        e.executed(cmd, Outcome::Done, s(9.52));
    }
    c.cpu += Duration::from_millis(500);
    c.swapped = 0;
    c.usage = 256 * MIB;
    after(e, &mut c);
    let sent = ticks_on(e, &c, 10, 30, host);
    (c, sent)
}

#[test]
fn a_woken_context_is_relaid_once_when_it_rests_on_a_swap_file() {
    let mut e = Engine::new(relaying());
    let (mut c, sent) = woken_once(&mut e, &HOST);
    assert_eq!(sent.len(), 1, "{sent:?}");
    let (at, b) = &sent[0];
    assert!(*at > 10, "after its call, resting: sent at {at} s");
    assert!(
        b.map_back && b.map_kept && b.order.is_empty() && !b.from_the_end,
        "{b:?}"
    );
    assert_eq!(b.pids, vec![100]);
    // Woken again: never relaid a second time.
    c.cpu += Duration::from_secs(1);
    assert!(ticks_on(&mut e, &c, 31, 60, &HOST).is_empty());
}

#[test]
fn no_relay_on_zram_nor_where_it_is_off() {
    let zram = HostFacts {
        next_swap_is_zram: true,
        ..HOST
    };
    let mut e = Engine::new(relaying());
    assert!(woken_once(&mut e, &zram).1.is_empty());
    let mut off = Engine::new(params());
    assert!(woken_once(&mut off, &HOST).1.is_empty());
}

#[test]
fn a_context_the_mover_is_busy_with_waits_for_its_relay() {
    let mut e = Engine::new(relaying());
    let (c, _) = {
        let mut c = Ctx::new("/fn", 64);
        e.track(c.id.clone(), Class::Extend, class(16), s(0.0));
        for i in 0..=8 {
            tick(&mut e, &[&c], f64::from(i));
        }
        c.swapped = 48 * MIB;
        c.usage = 16 * MIB;
        c.cpu += Duration::from_millis(50);
        let (_, cmds) = tick(&mut e, &[&c], 9.0);
        assert_eq!(bring_backs(&cmds).len(), 1, "{cmds:?}");
        c.swapped = 0;
        c.usage = 64 * MIB;
        (c, ())
    };
    let busy = |_: &ContextId| true;
    for i in 10..=12 {
        observe_all(&mut e, &[&c], f64::from(i));
        let d = e.decide(s(f64::from(i)), &HOST, &busy);
        assert!(relays(&d.commands).is_empty(), "{:?}", d.commands);
    }
    // Resting from 12 s (as `woken_once`'s): sent at the first tick the
    // mover is free.
    let sent = ticks_on(&mut e, &c, 13, 30, &HOST);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].0, 13);
}

#[test]
fn no_relay_for_a_context_whose_pages_went_after_its_call() {
    // Its limit taken down to its floor after the call: the relay would
    // read it all back into that limit.
    let mut e = Engine::new(relaying());
    let (_, sent) = woken_once_then(&mut e, &HOST, |_, c| {
        c.usage = 4 * MIB;
        c.swapped = 252 * MIB;
    });
    assert!(sent.is_empty(), "{sent:?}");
}
