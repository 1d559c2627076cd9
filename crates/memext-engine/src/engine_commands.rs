//! From a plan's actions to the commands the actuator carries out: in
//! which order, how fast, which are left out (already in flight, already
//! back, written less than `REASSERT` ago), and, where the extend limits
//! are the critical contexts' protection, how far a raise may go.

use std::collections::BTreeSet;

use super::{Engine, HostFacts, HEAT_LIFETIME, THROTTLE_DIVISOR};
use crate::command::{BringBack, Command, PushOut};
use crate::context::ContextState;
use crate::limit_room::LimitRoom;
use crate::model::State;
use crate::planner::Action;
use crate::predict::PrefetchReason;
use crate::{Class, ContextId, Instant};

impl Engine {
    /// Leaves out knob commands that would write what was written less than
    /// `REASSERT` ago; a context that is not idle has its memory knobs sent
    /// at every tick all the same (it is read at every tick anyway, and the
    /// ledger's re-read notices at once a limit someone else took over).
    pub(super) fn drop_repeats(&self, commands: Vec<Command>, now: Instant) -> Vec<Command> {
        commands
            .into_iter()
            .filter(|c| {
                self.contexts.get(c.id()).is_none_or(|t| {
                    let watched_often = t.model.state != State::Idle
                        && matches!(c, Command::Limit { .. } | Command::Protect { .. });
                    watched_often || !t.applied.repeats(c, now)
                })
            })
            .collect()
    }

    /// Turns planner actions into commands: protections and raised limits
    /// first, then bring-backs, then push-outs, then lowered limits; nothing
    /// squeezed below its usage while its pages move (the targeted page-out
    /// goes first, the limit after), nothing pushed out twice or brought
    /// back that is in. `others_in_background`: between ticks, serving
    /// that context's wake from usages a tick old, the others' lowerings go
    /// to the reclaimer only (it steps down from what the knob holds; a
    /// limit written in the loop below a usage grown since reclaimed there).
    pub(super) fn commands(
        &self,
        actions: &[Action],
        throttle: bool,
        now: Instant,
        host: &HostFacts,
        busy: &dyn Fn(&ContextId) -> bool,
        others_in_background: Option<&ContextId>,
    ) -> Vec<Command> {
        let slow = if throttle { THROTTLE_DIVISOR } else { 1 };
        let mut sorted: Vec<(&Action, &ContextState)> = actions
            .iter()
            .filter_map(|a| Some((a, self.contexts.get(a.key())?)))
            .collect();
        // Where the extend limits are the critical contexts' protection,
        // every lowered limit is written before any raise, and a raise gets
        // only the room they leave (see `limit_room`).
        let mut room = host
            .limits_protect
            .then(|| LimitRoom::new(host.capacity, self.contexts.values()))
            .flatten();
        // A predicted bring-back goes after the push-outs that make its room
        // (the mover keeps that order): read back into a full cgroup first,
        // its pages were reclaimed again before the wake came. So does the
        // lowered limit of one pushed out already: that frees its room.
        sorted.sort_by_key(|(a, t)| match a {
            Action::Protect { .. } => 0,
            Action::Limit { bytes, .. } if room.is_some() && *bytes < t.limit_in_force() => 1,
            Action::Limit { bytes, .. } if *bytes >= t.memory.usage => 2,
            Action::BringBack { reason, .. } if *reason == PrefetchReason::Woke => 3,
            Action::PushOut { .. } => 4,
            Action::Limit { .. } if pushed(t) => 4,
            Action::BringBack { .. } => 5,
            Action::Limit { .. } => 6,
            Action::Wait { .. } => 7, // the engine's admission freezes it
        });
        let mut moving: BTreeSet<&ContextId> = BTreeSet::new();
        let mut short: BTreeSet<&ContextId> = BTreeSet::new();
        // Lowerings already on their way down (in the background).
        let mut lowering: Vec<(&ContextId, u64)> = Vec::new();
        // The contexts this batch pushes out: their limits follow the
        // page-out (and are lowered first only as far as their usage), also
        // where a lowered limit goes before the push-out (`limit_room`).
        // Not one already pushed out (`pushed`): its pages are written but
        // still charged, and only its lowered limit frees them.
        let pushing: BTreeSet<&ContextId> = sorted
            .iter()
            .filter(|(a, t)| matches!(a, Action::PushOut { .. }) && !pushed(t) && !busy(&t.id))
            .map(|(_, t)| &t.id)
            .collect();
        let mut out = Vec::new();
        for (a, t) in sorted {
            let id = &t.id;
            let in_flight = busy(id) || moving.contains(id);
            match a {
                Action::Protect { bytes, .. } => out.push(Command::Protect {
                    id: id.clone(),
                    bytes: *bytes,
                    keep_anon: t.params.keep_anon,
                }),
                Action::Limit { bytes, .. } => {
                    // A lowering in the background is on its way down:
                    // nothing to write unless the limit is to stay above
                    // where it goes (that write stops it).
                    if let Some(to) = t
                        .reclaiming
                        .filter(|&to| lowering_covers(*bytes, t.limit_in_force(), to))
                    {
                        lowering.push((id, to));
                        continue;
                    }
                    // While its pages move, the limit follows the page-out
                    // down: no lower than the usage (nothing reclaimed by
                    // the write), so that the context cannot grow meanwhile.
                    // Not while a critical context is under pressure: it
                    // needs the room now, not at the mover's pace (held,
                    // the noise of bench/peers' redis x burst grew into a
                    // critical Redis: 125k major faults in a window).
                    let usage = t.charged();
                    let bytes = if (in_flight || pushing.contains(id)) && !throttle {
                        (*bytes).max(usage)
                    } else {
                        *bytes
                    };
                    // Below its usage the kernel reclaims in the writer:
                    // the limit is held at the usage now and the rest goes
                    // to the background, its room counted once it is done
                    // (`reclaimed`). Not while a critical context is under
                    // pressure: it needs the room now. Nor where the usage
                    // stands within the room the host leaves above the
                    // limit (`charge_room`): the limit holds it there.
                    let below = bytes.saturating_add(host.charge_room) < usage
                        && !throttle
                        && host.background_reclaim;
                    let resting = t.rests(now);
                    let reclaim =
                        (below && t.reclaiming.is_none() && !in_flight).then(|| Command::Reclaim {
                            id: id.clone(),
                            bytes,
                            urgent: false,
                            resting,
                            yields: t.fills_room(),
                        });
                    let bytes = if below {
                        usage.min(t.limit_in_force())
                    } else {
                        bytes
                    };
                    let fitted = room.as_mut().map_or(Some(bytes), |r| r.fit(id, bytes));
                    let need = bytes.min(t.memory.usage.max(t.working_set_bytes()));
                    if fitted.or(t.limit).unwrap_or(0) < need {
                        // Its raise waits for room: so does its read-back
                        // (into less room than its working set, it would
                        // reclaim its own pages as they came in). A later
                        // tick serves it.
                        short.insert(id);
                    }
                    let Some(bytes) = fitted else {
                        continue;
                    };
                    let other = others_in_background.is_some_and(|w| w != id);
                    if other && bytes < t.limit_in_force() {
                        out.push(reclaim.unwrap_or(Command::Reclaim {
                            id: id.clone(),
                            bytes,
                            urgent: false,
                            resting,
                            yields: t.fills_room(),
                        }));
                        continue;
                    }
                    out.push(Command::Limit {
                        id: id.clone(),
                        bytes,
                    });
                    // After the hold: a write of the limit stops a lowering.
                    out.extend(reclaim);
                }
                Action::BringBack { reason, .. } => {
                    if t.held.is_some() && !t.out && !t.squeezed {
                        continue; // already back (held for its predicted wake)
                    }
                    if short.contains(id) {
                        continue; // its limit waits for room (above)
                    }
                    out.push(Command::BringBack(
                        self.bring_back(t, *reason, slow, now, host),
                    ));
                    moving.insert(id);
                }
                Action::Wait { .. } => {}
                Action::PushOut { keep, .. } => {
                    if in_flight || pushed(t) {
                        continue;
                    }
                    out.push(Command::PushOut(PushOut {
                        id: id.clone(),
                        keep_bytes: *keep,
                        pids: t.pids.clone(),
                        keep: t.ws.hottest(now, HEAT_LIFETIME, *keep),
                        bandwidth: t.params.pageout_bandwidth / slow,
                    }));
                    moving.insert(id);
                }
            }
        }
        // A waking context whose raise waits for room waits frozen, as
        // admission keeps one, until a later tick or wake raises it: running
        // at the limit it has, it faulted its pages in against that limit,
        // reclaiming its own as they came (bench/peers' postgres x burst,
        // sampled every 0.1 s: 29-33 of 34 noise wakes a run touched their
        // whole 53 MiB heap under a limit below 48 MiB, mostly the 16 MiB
        // floor, a median 11.8-15.2 thousand charges meeting it, a median
        // 0.9-1.7 s). First, before its room is
        // asked for; also one already frozen (the tick keeps it so; see
        // `without_refreezes`).
        let freezes: Vec<Command> = short
            .iter()
            .filter_map(|id| self.contexts.get(*id))
            .filter(|t| t.waits_for_room(now))
            .map(|t| Command::Freeze {
                id: t.id.clone(),
                frozen: true,
            })
            .collect();
        out.splice(0..0, freezes);
        // A wake that waits for room waits for these, and for those on
        // their way: asked again, urgent (the reclaimer hurries them).
        if !short.is_empty() {
            for c in &mut out {
                if let Command::Reclaim { urgent, .. } = c {
                    *urgent = true;
                }
            }
            out.extend(lowering.into_iter().map(|(id, bytes)| Command::Reclaim {
                id: id.clone(),
                bytes,
                urgent: true,
                resting: self.contexts.get(id).is_some_and(|t| t.rests(now)),
                yields: self.contexts.get(id).is_some_and(ContextState::fills_room),
            }));
        }
        out
    }

    /// Leaves out the freezes of contexts already frozen.
    pub(super) fn without_refreezes(&self, mut commands: Vec<Command>) -> Vec<Command> {
        commands.retain(|c| {
            !matches!(c, Command::Freeze { frozen: true, .. })
                || self.contexts.get(c.id()).is_none_or(|t| !t.frozen)
        });
        commands
    }

    /// Whether a critical context is tracked.
    pub(super) fn any_critical(&self) -> bool {
        self.contexts.values().any(|t| t.class == Class::Critical)
    }

    pub(super) fn bring_back(
        &self,
        t: &ContextState,
        reason: PrefetchReason,
        slow: u64,
        now: Instant,
        host: &HostFacts,
    ) -> BringBack {
        BringBack {
            id: t.id.clone(),
            reason,
            pids: t.pids.clone(),
            order: t.ws.ranked(now, HEAT_LIFETIME),
            // Its process waits on it: a woken context's read-back goes as
            // fast as the tier reads, unless a critical context shares the
            // host (its CPU and I/O are what the pacing keeps). (Paced at
            // `prefetch_bandwidth`, 512 MiB/s, a bench/faas function's wake
            // read back at a third of what zram gives, 1.5-1.7 GiB/s.)
            bandwidth: if reason == PrefetchReason::Woke && !self.any_critical() {
                0
            } else {
                t.params.prefetch_bandwidth / slow
            },
            // Mapping is for a wake still `prefetch_lead` away: a context
            // already touching its pages (woke) or about to (its leader woke,
            // it follows within a second) would race the collapse and lose
            // (measured: a follower's touch went from 0.17 s to 0.9 s), so
            // those get the read-back alone.
            map_back: t.params.map_back && reason == PrefetchReason::Periodic,
            map_kept: t.params.map_back && t.params.map_kept && reason == PrefetchReason::Periodic,
            // A woken context faults its hottest pages in by itself; from zram
            // that is as fast as memext's read (measured: in the same order,
            // both decompressed the same pages and the wake took 0.50 s; from
            // the end, 0.31 s). From a swap file, the process gains most from
            // following memext's reads ahead of it.
            from_the_end: reason == PrefetchReason::Woke && host.next_swap_is_zram,
        }
    }
}

/// Whether memext already pushed the context out (idle: out; active:
/// squeezed, until it turns idle: then pushed out as an idle one, which
/// marks it out) and has not brought it back since: not pushed out again. A
/// page-out by address writes the pages but leaves them charged (in the
/// swap cache) until a reclaim frees them (measured: a 55 MiB process paged
/// out with MADV_PAGEOUT still charged 55 MiB a second later; its limit
/// written to 8 MiB took 9 ms and left 7), so its usage does not fall
/// until its limit does, and pushed again it would have its limit held at
/// that usage at every tick (bench/faas' functions, quiet after their
/// start, kept their charge that way until they turned idle 10 s later,
/// and the capped parent's reclaim laid the fill: session 82).
fn pushed(t: &ContextState) -> bool {
    t.out || (t.squeezed && t.model.state != State::Idle)
}

/// Whether a lowering in the background to `to`, from the limit `in_force`,
/// serves a new target of `bytes`: one below the limit in force and not
/// above where the lowering goes (within `PUSH_SLACK_BYTES`). A target
/// between the two is not a lowering already on its way: going on, the
/// lowering would take the context below it. A bench/faas function
/// planned a refill (its whole 53 MiB, read back at once) while its
/// lowering to its 2 MiB floor ran on below it: its read-back charged into
/// a 3 MiB limit and the function died of SIGSEGV 0.3 s later (session 77;
/// the kernel's own writes to a process, its rseq area, fail where the
/// cgroup can charge nothing).
pub(super) fn lowering_covers(bytes: u64, in_force: u64, to: u64) -> bool {
    bytes < in_force && bytes <= to.saturating_add(crate::planner::PUSH_SLACK_BYTES)
}

#[cfg(test)]
mod tests {
    use super::lowering_covers;

    const MIB: u64 = 1 << 20;

    #[test]
    fn a_lowering_on_its_way_covers_only_targets_it_does_not_go_below() {
        // Held at 60 MiB, going to 16: a new target of 16-24 MiB is on its way.
        assert!(lowering_covers(16 * MIB, 60 * MIB, 16 * MIB));
        assert!(lowering_covers(24 * MIB, 60 * MIB, 16 * MIB));
        // A target above the limit in force is a raise: written.
        assert!(!lowering_covers(70 * MIB, 60 * MIB, 16 * MIB));
        // Going to its 2 MiB floor, a refill's 53 MiB is not on its way:
        // written, which stops the lowering.
        assert!(!lowering_covers(53 * MIB, 66 * MIB, 2 * MIB));
    }
}
