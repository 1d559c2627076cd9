//! Room for arrivals: what contexts that started within `ARRIVAL_WINDOW`
//! hold is kept free for the next ones, so that their charges do not meet
//! the host's cap.

use super::*;
use crate::engine::plan_input::ARRIVAL_WINDOW;

/// `/old` (600 MiB) ran at the daemon's start and rests; at 3 s `/new`
/// arrives and writes 300 MiB. Returns both and the commands of each tick
/// from 3 s, every 0.5 s until `until`.
fn arrival(e: &mut Engine, until: f64) -> Vec<(f64, Vec<Command>)> {
    let (mut old, mut new) = (Ctx::new("/old", 600), Ctx::new("/new", 300));
    assert!(e.track(old.id.clone(), Class::Extend, full_host(), s(0.0)));
    for i in 0..=2 {
        if i < 2 {
            old.cpu += Duration::from_millis(500);
        }
        tick(e, &[&old], f64::from(i));
    }
    assert!(e.track(new.id.clone(), Class::Extend, full_host(), s(3.0)));
    let mut out = Vec::new();
    let mut at = 3.0;
    while at <= until {
        if at < 4.0 {
            new.cpu += Duration::from_millis(300);
        }
        let (_, cmds) = tick(e, &[&old, &new], at);
        if let Some(p) = push_outs(&cmds).first() {
            // Its page-out done and its limit lowered: what it keeps.
            old.usage = p.keep_bytes;
            old.swapped = 600 * MIB - p.keep_bytes;
        }
        out.push((at, cmds));
        at += 0.5;
    }
    out
}

/// 900 MiB fit in 1024 with the default reserve; with the new context's 300
/// MiB kept free for the next arrival, the resting one makes room at once.
#[test]
fn an_arrival_keeps_room_free_for_the_next_one() {
    let mut e = Engine::new(params());
    let ticks = arrival(&mut e, 3.0);
    let p: Vec<_> = ticks.iter().flat_map(|(_, c)| push_outs(c)).collect();
    assert_eq!(p.len(), 1, "{ticks:?}");
    assert_eq!(p[0].id.as_str(), "/old");
    assert!(
        p[0].keep_bytes <= 1024 * MIB - 300 * MIB - 300 * MIB,
        "room for one more like it: keeps {} MiB",
        p[0].keep_bytes / MIB
    );
    assert_eq!(e.arrivals(s(3.0)), 300 * MIB);
}

/// Past the window the arrival is a context like the others: its room is
/// no longer kept, and nothing more is taken from the resting one for it.
#[test]
fn the_room_for_arrivals_ends_with_the_window() {
    let mut e = Engine::new(params());
    let end = 3.0 + ARRIVAL_WINDOW.as_secs_f64();
    let ticks = arrival(&mut e, end + 2.0);
    assert_eq!(e.arrivals(s(end)), 0);
    assert!(e.arrivals(s(end - 0.5)) > 0);
    let kept = ticks
        .iter()
        .find_map(|(_, c)| push_outs(c).first().map(|p| p.keep_bytes))
        .expect("pushed out for the arrival");
    for (at, cmds) in ticks.iter().filter(|(at, _)| *at >= end) {
        assert!(
            !cmds.iter().any(|c| matches!(c,
                Command::Limit { id, bytes } if id.as_str() == "/old" && *bytes < kept)),
            "at {at}: {cmds:?}"
        );
    }
}

/// Contexts there at the daemon's first tick did not arrive: nothing kept
/// for them (a daemon started on a full host would push out half of it).
#[test]
fn contexts_there_at_the_first_tick_are_not_arrivals() {
    let mut e = Engine::new(params());
    let (a, b) = (Ctx::new("/a", 450), Ctx::new("/b", 450));
    for c in [&a, &b] {
        assert!(e.track(c.id.clone(), Class::Extend, full_host(), s(0.0)));
    }
    let (_, cmds) = tick(&mut e, &[&a, &b], 0.0);
    assert_eq!(e.arrivals(s(0.0)), 0);
    assert!(push_outs(&cmds).is_empty(), "{cmds:?}");
}
