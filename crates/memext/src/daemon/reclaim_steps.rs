//! The reclaimer's steps: how a lowering is written, `STEP` by `STEP`, and
//! what it leaves when the kernel refuses one or a stop comes. Pure: the
//! writes go through the caller's `write`.

use super::{Ended, Job, STEP};

/// Why a step was not written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A stop came (`Reclaimer::stop_job`): nothing more is written.
    Stopped,
    /// The write failed: the kernel refused it (v1: it could not reclaim
    /// that far), or the cgroup went away.
    Refused(String),
}

/// Writes `job`'s steps with `write(value, relax)`, recording in `ended`
/// how far it got. A step the kernel refuses ends the job, and the limit
/// is given one `STEP` of room back above the last value written (within
/// what the job began from: `relax`). Refused, the kernel has just failed
/// to reclaim the context below it, and a context at a v1 limit where its
/// reclaim fails, with OOM kills off (as memext runs it), gets no OOM wait
/// for a charge outside its own page faults: such a fault made by the
/// kernel on its behalf fails, and where that is glibc's rseq area, which
/// the kernel writes each time the task returns to user space after it
/// was switched out, the task is killed by SIGSEGV. Measured here: a
/// sleeping process held at such a limit (swappiness 0, its pages in
/// swap) died in 6 of 10 trials with rseq and in none of 10 without it
/// (it waited in the OOM wait); a bench/faas function ended the same way
/// (SIGSEGV, no OOM kill, no fault reported) 0.2 s after its limit went
/// down to a 2 MiB floor (session 48,
/// `docs/faas/s48-2026-12-01/`). A limit the kernel just failed to
/// reclaim under is where that happens next. A job that reaches `to`
/// leaves the limit at `leave_at` (within where it began, written as room
/// given back): the context holds what the last step left it and has that
/// room above.
pub fn step_down(
    job: &Job,
    ended: &mut Ended,
    write: &mut dyn FnMut(u64, bool) -> Result<(), Step>,
) {
    lower_in_steps(job, ended, write);
    let leave = job.leave_at.min(job.from);
    if ended.steps > 0 && ended.reached == job.to && leave > job.to {
        give_room(ended, write, leave);
    }
}

/// Writes `room` (above the last step) as room given back; whether it
/// stands. A stop that came meanwhile is the job's stop (the stopper
/// writes the limit), not a failure.
fn give_room(
    ended: &mut Ended,
    write: &mut dyn FnMut(u64, bool) -> Result<(), Step>,
    room: u64,
) -> bool {
    match write(room, true) {
        Ok(()) => {
            ended.reached = room;
            true
        }
        Err(Step::Stopped) => {
            ended.stopped = true;
            false
        }
        Err(Step::Refused(_)) => false,
    }
}

/// `step_down`'s steps: down to `to`, or up to a refusal (room given back)
/// or a stop.
fn lower_in_steps(
    job: &Job,
    ended: &mut Ended,
    write: &mut dyn FnMut(u64, bool) -> Result<(), Step>,
) {
    for next in steps(job.from, job.to) {
        match write(next, false) {
            Ok(()) => {
                ended.reached = next;
                ended.steps += 1;
            }
            Err(Step::Stopped) => {
                ended.stopped = true;
                return;
            }
            Err(Step::Refused(e)) => {
                ended.error = Some(e);
                let room = ended.reached.saturating_add(STEP).min(job.from);
                if room > ended.reached && give_room(ended, write, room) {
                    ended.relaxed = true;
                }
                return;
            }
        }
    }
}

/// The values written from `from` down to `to`: `STEP` apart, `to` last.
pub fn steps(from: u64, to: u64) -> impl Iterator<Item = u64> {
    let mut at = from;
    std::iter::from_fn(move || {
        if at <= to {
            return None;
        }
        at = at.saturating_sub(STEP).max(to);
        Some(at)
    })
}
