//! Replays the wakes a daemon recorded (bench/faas runs) through this
//! build's `ActivationHistory` and `predict::is_due`, judged at a tick every
//! second as the engine judges them: which calls had their function due
//! (brought back or held) from before the call until it came, and how many
//! times a function was due for nothing.
//!
//! Input on stdin, as `docs/faas/s72-2026-12-05/extract_wakes.py` writes it:
//! `r RUN`, then per function `f NAME CLASS`, `c CALL_TIMES...`,
//! `w RECORDED_WAKES...` (seconds, none negative), and optionally
//! `v WAKES...`: those of the wakes seen by CPU alone (warm calls), as
//! `docs/faas/s72-2026-12-05/extract_wakes.py` writes them (recorded with
//! `record_by_cpu`; without the line, all as wakes).
//!
//!   python3 extract_wakes.py RUN_DIR... | cargo run -q --example replay_wakes -p memext-engine

use std::collections::BTreeMap;
use std::io::Read;
use std::time::Duration;

use memext_engine::history::ActivationHistory;
use memext_engine::predict::is_due;

/// The engine's default lead (`prefetch_lead`).
const LEAD: Duration = Duration::from_secs(3);
/// A call counts as predicted if it was due at least this long before it.
const AHEAD: f64 = 0.2;
const TICK: f64 = 1.0;
/// Calls judged: from the 4th of each function, as bench/faas counts its
/// timer calls from the 4th.
const FROM_CALL: usize = 3;

#[derive(Default)]
struct Tally {
    judged: usize,
    hit: usize,
    episodes: usize,
    for_nothing: usize,
}

struct Function {
    class: String,
    calls: Vec<f64>,
    wakes: Vec<f64>,
    by_cpu: Vec<f64>,
}

fn secs(t: f64) -> Duration {
    Duration::from_secs_f64(t.max(0.0))
}

/// Ticks from the first wake to past the last call: whether the function
/// was due at each one, with the wakes recorded by then.
fn due_at_ticks(f: &Function) -> Vec<(f64, bool)> {
    let (Some(&first), Some(&last)) = (f.wakes.first(), f.calls.last()) else {
        return Vec::new();
    };
    let mut h = ActivationHistory::default();
    let mut next = 0;
    let mut t = first.floor() + 0.73;
    let mut out = Vec::new();
    while t <= last + 5.0 {
        while next < f.wakes.len() && f.wakes[next] <= t {
            let w = f.wakes[next];
            if f.by_cpu.contains(&w) {
                h.record_by_cpu(secs(w));
            } else {
                h.record(secs(w));
            }
            next += 1;
        }
        out.push((t, is_due(&h, secs(t), LEAD)));
        t += TICK;
    }
    out
}

fn replay(name: &str, f: &Function, tally: &mut Tally, show_misses: bool) {
    let ticks = due_at_ticks(f);
    // Episodes: runs of ticks due, [start, end).
    let mut episodes: Vec<(f64, f64)> = Vec::new();
    let mut open: Option<f64> = None;
    for &(t, due) in &ticks {
        match (open, due) {
            (None, true) => open = Some(t),
            (Some(s), false) => {
                episodes.push((s, t));
                open = None;
            }
            _ => {}
        }
    }
    if let Some(s) = open {
        episodes.push((s, f64::INFINITY));
    }
    tally.episodes += episodes.len();
    tally.for_nothing += episodes
        .iter()
        .filter(|(s, e)| !f.calls.iter().any(|c| c >= s && c < e))
        .count();
    for &c in f.calls.iter().skip(FROM_CALL) {
        tally.judged += 1;
        if episodes.iter().any(|&(s, e)| s <= c - AHEAD && e > c) {
            tally.hit += 1;
        } else if show_misses {
            println!("  not due ahead: {name} call at {c:.2}");
        }
    }
}

fn parse(text: &str) -> Vec<(String, BTreeMap<String, Function>)> {
    let mut runs: Vec<(String, BTreeMap<String, Function>)> = Vec::new();
    let mut name = String::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let times = |w: std::str::SplitWhitespace<'_>| -> Vec<f64> {
            w.filter_map(|x| x.parse().ok()).collect()
        };
        match words.next() {
            Some("r") => runs.push((words.next().unwrap_or("").into(), BTreeMap::new())),
            Some("f") => {
                name = words.next().unwrap_or("").into();
                let class = words.next().unwrap_or("").into();
                if let Some((_, fs)) = runs.last_mut() {
                    let f = Function {
                        class,
                        calls: Vec::new(),
                        wakes: Vec::new(),
                        by_cpu: Vec::new(),
                    };
                    fs.insert(name.clone(), f);
                }
            }
            Some("c") => {
                if let Some(f) = runs.last_mut().and_then(|(_, fs)| fs.get_mut(&name)) {
                    f.calls = times(words);
                }
            }
            Some("w") => {
                if let Some(f) = runs.last_mut().and_then(|(_, fs)| fs.get_mut(&name)) {
                    f.wakes = times(words);
                }
            }
            Some("v") => {
                if let Some(f) = runs.last_mut().and_then(|(_, fs)| fs.get_mut(&name)) {
                    f.by_cpu = times(words);
                }
            }
            _ => {}
        }
    }
    runs
}

fn main() {
    let mut text = String::new();
    if std::io::stdin().read_to_string(&mut text).is_err() {
        eprintln!("replay_wakes: cannot read stdin");
        std::process::exit(2);
    }
    // REPLAY_MISSES=1: each timer call from the 4th not due ahead.
    let misses = std::env::var_os("REPLAY_MISSES").is_some();
    let mut total: BTreeMap<&str, Tally> = BTreeMap::new();
    let runs = parse(&text);
    println!("run | timer calls from the 4th: due ahead / judged | due episodes for nothing (timer, poisson, bursty)");
    for (run, fs) in &runs {
        let mut per: BTreeMap<&str, Tally> = BTreeMap::new();
        for (name, f) in fs {
            let class = match f.class.as_str() {
                "timer" => "timer",
                "poisson" => "poisson",
                _ => "bursty",
            };
            let show = misses && class == "timer";
            replay(name, f, per.entry(class).or_default(), show);
        }
        let g = |c: &str, m: fn(&Tally) -> usize| per.get(c).map_or(0, m);
        println!(
            "{run} | {} / {} | {} {} {}",
            g("timer", |t| t.hit),
            g("timer", |t| t.judged),
            g("timer", |t| t.for_nothing),
            g("poisson", |t| t.for_nothing),
            g("bursty", |t| t.for_nothing),
        );
        for (c, t) in per {
            let a = total.entry(c).or_default();
            a.judged += t.judged;
            a.hit += t.hit;
            a.episodes += t.episodes;
            a.for_nothing += t.for_nothing;
        }
    }
    for (c, t) in &total {
        println!(
            "{c}: calls from the 4th due ahead {} of {}; due episodes {}, for nothing {}",
            t.hit, t.judged, t.episodes, t.for_nothing
        );
    }
}
