//! The daemon's actions as structured events: every line carries an `event`
//! field (its name, below) and a `context` field (the context's id) beside
//! the human message, so that `--log-format json` gives tools something to
//! read that does not change when a message is reworded. Tests and benches
//! read these fields, never the message text.
//!
//! Events: `tracking`, `gone`, `became-idle`, `woke`, `onset`, `warm-call`,
//! `settled`, `no-call` (a resting context's reading whose CPU said "call"
//! but whose processes touched too little of their memory for one:
//! `referenced_kib` of `resident_kib`, `memext_engine::touch`) and, at debug
//! level, `rested` (a resting context's reading that was no call and used
//! half a call's CPU or more; at trace level, any; also `allowance_us`, what
//! its rest allowed, and `resident`) (field `via`: `tick`, `poll` or `event`; `cpu_us` and `span_ms`:
//! the CPU the context used over the reading that showed it; `faults`: the
//! page faults it took over it (0 for a poll, which reads CPU only); `held`: a
//! poll of a context held for a predicted wake, where a wake is expected;
//! a tick's reading is judged alike for all and says false), `bringing-back` (`reason`, `from_the_end`, `map_back`, `map_kept`),
//! `pushing-out` (`keep_bytes`), `frozen` and `thawed` (a waking context
//! waits for room, and is admitted), `out-of-memory` (`limit_bytes`: a
//! task waits in the v1 OOM wait at its limit; the limit it is raised to),
//! `throttle` (`on`, `pressed`), `overcommitted`, at debug level `room`
//! (each step's share of a plan's room, when it kept a resting context in part),
//! `foreign-knob` (`knob`, `found`, `ours`), `knob-failed`, `slow-write`
//! (`knob`, `value`, `ms`: a knob write that blocked the loop 10 ms or more), `adopted`
//! (`knobs`) and `disowned` at start, `model-loaded`, `model-discarded`,
//! `resumed` (`out`, `wakes`, `working_set_bytes`), `model-save-failed`; from
//! the mover:
//! `read-back` (`bytes`, `seconds`), `mapped-back` and `mapped-kept` (`bytes`,
//! `seconds`, `blocks`, `refused` and why: `refused_busy` EAGAIN,
//! `refused_charge` EBUSY, the huge page not charged to the cgroup,
//! `refused_no_memory` ENOMEM, `refused_unsuitable` EINVAL/EFAULT;
//! `mapped-kept`: the blocks held whole mapped, `map_kept`), `move-failed`.

use std::time::Duration;

use memext_engine::context::ContextState;
use memext_engine::engine::{BringBack, PushOut};
use memext_engine::model::{Judged, State, Transition};
use memext_engine::planner::RoomAccount;
use memext_engine::rest::CALL_CPU;
use memext_engine::{ContextId, Instant};

use crate::contexts::MemoryContext;
use crate::units::human_bytes;

pub fn tracking(ctx: &MemoryContext) {
    tracing::info!(
        event = "tracking",
        context = %ctx.path,
        runtime = %ctx.identity.runtime,
        class = %ctx.class,
        "tracking {} ({}, {})",
        ctx.path,
        ctx.identity.runtime,
        ctx.class
    );
}

/// A context found again after a restart, with what the engine had learned.
pub fn resumed(id: &ContextId, out: bool, wakes: usize, working_set_bytes: u64) {
    tracing::info!(
        event = "resumed",
        context = %id,
        out,
        wakes,
        working_set_bytes,
        "{id}: resumed from the saved model ({wakes} wake(s) known, working set {}{})",
        human_bytes(working_set_bytes),
        if out { ", pushed out" } else { "" }
    );
}

/// A waking context (or, under `admit_at_peak`, one starting again) frozen
/// to wait for room (`frozen`), or admitted (`thawed`).
pub fn frozen(id: &ContextId, frozen: bool) {
    if frozen {
        tracing::info!(event = "frozen", context = %id, "{id}: frozen until its room fits");
    } else {
        tracing::info!(event = "thawed", context = %id, "{id}: admitted; thawed");
    }
}

/// A task of the context waits in the v1 OOM wait at its limit; the limit
/// goes up to `limit`, as written to the knob (None: no write, e.g. a dry
/// run).
pub fn out_of_memory(id: &ContextId, limit: Option<u64>) {
    let to = limit.map_or_else(
        || "not raised".to_owned(),
        |b| format!("raised to {}", human_bytes(b)),
    );
    tracing::info!(
        event = "out-of-memory",
        context = %id,
        limit_bytes = limit,
        "{id}: a task waits for memory at its limit (OOM wait); {to}"
    );
}

/// At start on cgroup v1 (`v1-hard-limits`): memext holds resting contexts
/// at hard limits with OOM kills off, so that a task that outgrows its
/// limit waits (the OOM wait) until memext raises it. That wait covers only
/// the task's own page faults: where the kernel cannot reclaim under the
/// limit, a charge made on its behalf otherwise fails, and the kernel's
/// write of glibc's rseq area, made each time the task returns to user
/// space after it was switched out, then kills it with SIGSEGV (session 48:
/// a sleeper held so died in 6 of 10 trials with rseq, in none of 10
/// without; `docs/faas/s48-2026-12-01/rseq/`). memext leaves
/// `act::V1_CHARGE_ROOM` above each limit it reclaims to, so that the
/// first charges after a push-out need no reclaim (where bench/faas lost
/// its functions), but a context that fills that room is at its limit
/// again. Cgroup v2's `memory.high` throttles and never fails a charge.
pub fn v1_hard_limits() {
    tracing::warn!(
        event = "v1-hard-limits",
        "cgroup v1: contexts are held at hard limits with OOM kills off; where the kernel cannot reclaim \
         under such a limit, a task of the context can die of SIGSEGV (a charge outside its own page \
         faults fails: glibc's rseq area); memext leaves 1MiB of room above each limit it reclaims to, \
         cgroup v2 has no such failure"
    );
}

pub fn gone(id: &ContextId) {
    tracing::info!(event = "gone", context = %id, "{id}: gone");
}

/// A state change; `via` is `tick` (a full sample) or `poll` (between
/// ticks). `judged`: the reading it was seen in (fields `cpu_us`, `span_ms`,
/// `faults` and `major_faults` (a full reading's page faults; 0 for a
/// poll), `held`: a poll judged it as of a context held for a predicted
/// wake, and where the host was asked what it touched, `referenced_kib`
/// and `resident_kib`).
pub fn transition(
    id: &ContextId,
    tr: Transition,
    state: State,
    via: &'static str,
    judged: Option<Judged>,
) {
    let Judged {
        cpu,
        span,
        faults,
        major_faults,
        expected: held,
        touched,
    } = judged.unwrap_or_default();
    tracing::info!(
        event = tr.name(),
        context = %id,
        state = %state,
        via,
        cpu_us = u64::try_from(cpu.as_micros()).unwrap_or(u64::MAX),
        span_ms = u64::try_from(span.as_millis()).unwrap_or(u64::MAX),
        faults,
        major_faults,
        held,
        referenced_kib = touched.map(|t| t.referenced >> 10),
        resident_kib = touched.map(|t| t.resident >> 10),
        "{id}: {} ({state}, {via})",
        tr.name()
    );
}

/// A reading of a resting context that was no call but used at least half
/// a call's CPU (`rest::CALL_CPU`), at debug level: what it used, over what,
/// against what its rest allows (`allowance_us`, absent while not learned;
/// a reading with `major_faults` is not learned, and with more than
/// `rest::WARM_CALL_MAJOR_FAULTS` is no warm call either) and whether its
/// pages were in (only then is a call judged from its CPU): why a warm call
/// went unseen. At trace level every other resting reading is logged alike,
/// so that a rest rule can be replayed on all of them.
///
/// A reading whose CPU said "call" and whose touch said no is logged at
/// info level as `no-call`, whatever the level.
pub fn rested(id: &ContextId, via: &'static str, t: &ContextState, at: Instant) {
    let Some(j) = t.model.judged else {
        return;
    };
    let no_call = j.touched.filter(|touch| !touch.is_call());
    let debug = tracing::enabled!(tracing::Level::DEBUG) && j.cpu >= CALL_CPU / 2;
    let trace = tracing::enabled!(tracing::Level::TRACE);
    if (no_call.is_none() && !debug && !trace) || !t.rests(at) {
        return;
    }
    if let Some(touch) = no_call {
        tracing::info!(
            event = "no-call",
            context = %id,
            via,
            cpu_us = u64::try_from(j.cpu.as_micros()).unwrap_or(u64::MAX),
            span_ms = u64::try_from(j.span.as_millis()).unwrap_or(u64::MAX),
            held = j.expected,
            referenced_kib = touch.referenced >> 10,
            resident_kib = touch.resident >> 10,
            "{id}: no call: its CPU said one, it touched {} of {} KiB ({via})",
            touch.referenced >> 10,
            touch.resident >> 10
        );
        return;
    }
    let us = |d: Duration| u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
    macro_rules! rested {
        ($level:ident) => {
            tracing::$level!(
                event = "rested",
                context = %id,
                via,
                cpu_us = us(j.cpu),
                span_ms = u64::try_from(j.span.as_millis()).unwrap_or(u64::MAX),
                faults = j.faults,
                major_faults = j.major_faults,
                allowance_us = t.model.rest_allowance(j.span).map(us),
                resident = t.is_resident(),
                "{id}: rested ({via})"
            )
        };
    }
    if debug {
        rested!(debug);
    } else {
        rested!(trace);
    }
}

pub fn bringing_back(b: &BringBack) {
    tracing::info!(
        event = "bringing-back",
        context = %b.id,
        reason = %b.reason,
        from_the_end = b.from_the_end,
        map_back = b.map_back,
        map_kept = b.map_kept,
        "{}: bringing back ({}{})",
        b.id,
        b.reason,
        if b.from_the_end { ", from the end" } else { "" }
    );
}

pub fn pushing_out(p: &PushOut) {
    tracing::info!(
        event = "pushing-out",
        context = %p.id,
        keep_bytes = p.keep_bytes,
        "{}: pushing out, keeping {}",
        p.id,
        human_bytes(p.keep_bytes)
    );
}

pub fn throttle(on: bool, pressed: &[ContextId]) {
    let names: Vec<&str> = pressed.iter().map(ContextId::as_str).collect();
    let pressed = names.join(",");
    if on {
        tracing::warn!(
            event = "throttle",
            on,
            pressed = %pressed,
            "critical context under memory pressure ({}): page-out and prefetch at a quarter of their bandwidth",
            names.join(", ")
        );
    } else {
        tracing::info!(
            event = "throttle",
            on,
            "no critical context under pressure: page-out and prefetch at full bandwidth"
        );
    }
}

/// At debug level, where a plan's room went when it kept a resting context
/// in part or not at all (`room`: each step's bytes, `kept_whole`, and
/// `squeezed`, a JSON list in the keep order, the most valuable first: each
/// one's `key`, `holds`, `target`, `whole` and `expected_wake_in`; and
/// `foreseen`, the contexts served whole for a predicted wake: each one's
/// `key`, `reason`, `holds` and `swapped`). `via`:
/// `tick`, or `wake` for the plan that served a wake between ticks (whose
/// context is `context`).
pub fn room(a: &RoomAccount, woken: Option<&ContextId>) {
    if a.squeezed.is_empty() || !tracing::enabled!(tracing::Level::DEBUG) {
        return;
    }
    let squeezed = serde_json::to_string(&a.squeezed).unwrap_or_default();
    let foreseen = serde_json::to_string(&a.foreseen).unwrap_or_default();
    let context = woken.map(ToString::to_string).unwrap_or_default();
    tracing::debug!(
        event = "room",
        via = if woken.is_some() { "wake" } else { "tick" },
        context = %context,
        critical = a.critical,
        floors = a.floors,
        woken = a.woken,
        in_turn = a.in_turn,
        queued = a.queued,
        prefetched = a.prefetched,
        busy = a.busy,
        kept = a.kept,
        refilled = a.refilled,
        margins = a.margins,
        spread = a.spread,
        left = a.left,
        reserve = a.reserve,
        kept_whole = a.kept_whole,
        squeezed = %squeezed,
        foreseen = %foreseen,
        "the plan kept {} resting context(s) in part or not at all ({} whole)",
        a.squeezed.len(),
        a.kept_whole
    );
}

/// The background moves' cpu group switched on (a critical context runs)
/// or off (none runs: its threads went home).
pub fn move_group(on: bool, dir: &std::path::Path) {
    tracing::info!(
        event = "move-group",
        on,
        group = %dir.display(),
        "background moves {} their cpu group: {}",
        if on { "join" } else { "leave" },
        if on { "a critical context runs" } else { "no critical context runs" }
    );
}

pub fn overcommitted() {
    tracing::warn!(
        event = "overcommitted",
        "critical demand and floors exceed the capacity"
    );
}

pub fn foreign_knob(id: &ContextId, knob: &str, found: &str, ours: &str) {
    tracing::warn!(
        event = "foreign-knob",
        context = %id,
        knob,
        found,
        ours,
        "{id}: {knob} is {found}, not the {ours} memext wrote; someone else manages it now, memext leaves this context alone"
    );
}

pub fn knob_failed(id: &ContextId, knob: &str, value: &str, e: &dyn std::fmt::Display) {
    tracing::warn!(
        event = "knob-failed",
        context = %id,
        knob,
        value,
        "{id}: {knob} = {value}: {e:#}"
    );
}

/// A knob write that held the daemon's loop (a v1 limit below the usage is
/// reclaimed in the writing thread).
pub fn slow_write(id: &ContextId, knob: &str, value: &str, took: std::time::Duration) {
    let ms = took.as_secs_f64() * 1e3;
    tracing::info!(
        event = "slow-write",
        context = %id,
        knob,
        value,
        ms,
        "{id}: writing {knob} = {value} took {ms:.0} ms"
    );
}

/// A lowering's wait for read-backs shorter than this is not said in its
/// message (the gate was open: a look at it takes microseconds).
const YIELD_SAID: std::time::Duration = std::time::Duration::from_millis(1);

/// A lowering in the background ended (`reclaimed`): how far it got, in how
/// many writes and how long (and how much of it it waited for wakes being
/// read back, `yielded_ms`), and why it stopped short.
pub fn reclaimed(e: &super::reclaim::Ended) {
    let ms = e.took.as_secs_f64() * 1e3;
    tracing::info!(
        event = "reclaimed",
        context = %e.id,
        knob = %e.knob,
        to = e.to,
        reached = e.reached,
        steps = e.steps,
        paged_out = e.paged_out,
        stopped = e.stopped,
        relaxed = e.relaxed,
        ms,
        yielded_ms = e.yielded.as_secs_f64() * 1e3,
        "{}: {} lowered to {} in {} steps ({} paged out first), {ms:.0} ms{}{}{}{}",
        e.id,
        e.knob,
        crate::units::human_bytes(e.reached),
        e.steps,
        crate::units::human_bytes(e.paged_out),
        if e.stopped { " (stopped: written again)" } else { "" },
        e.error.as_deref().map(|x| format!(" (stopped: {x})")).unwrap_or_default(),
        if e.relaxed { "; a step of room given back" } else { "" },
        if e.yielded >= YIELD_SAID {
            format!("; {:.0} ms of it yielding to wakes", e.yielded.as_secs_f64() * 1e3)
        } else {
            String::new()
        }
    );
}
