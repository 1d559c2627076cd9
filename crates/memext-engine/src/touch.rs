//! Whether a resting context's CPU was a call: the memory it touched.
//!
//! A resident context's call takes no fault, so CPU is all the readings
//! show of it, and CPU alone does not tell a call from a burst of a resting
//! runtime's (`rest`: more than half of a bench/faas run's warm calls had
//! no call one afternoon). A call does what the context is there for, with
//! its state: it touches its working set. The host can tell how much of a
//! context's memory its processes referenced since it last asked (the
//! accessed bits of their page tables, read and cleared:
//! `/proc/PID/smaps_rollup`'s `Referenced`, `/proc/PID/clear_refs`), so
//! a reading whose CPU says "call" is asked about, and taken for one only
//! if the context touched a share of what it has in DRAM.
//!
//! Measured on this host (bench/faas' Python handler with a 48 MiB heap,
//! 70 MiB resident, alone): at rest it referenced 1.9-2.6 MiB over 1, 2 and
//! 5 s (its interpreter's and libraries' pages: the same whatever the
//! span), a call 56 MiB (it reads a byte of each heap page). Half a
//! handler's touch is still well above an eighth. A context whose calls
//! touch less than an eighth of what it holds is not confirmed this way
//! and is seen only by the activity thresholds, as before CPU rules.
//!
//! The ask clears the bits it counts, and on cgroup v1 the kernel's
//! reclaim at a capped parent reads those bits for "used lately": a
//! context asked as its call is confirmed then looks unused, and loses its
//! pages first. In bench/faas (session 42, three rotated rounds) the asks
//! took warm calls with no call from 7-21 a run to 0-2 and calls not seen
//! from 94-106 to 80-86, but calls that faulted with nothing taken by
//! memext rose from 9-12 to 26-38 and the calls within 8 ms fell in two of
//! three rounds. So the daemon answers only with `daemon.touches = true`
//! (off by default); unanswered, the CPU decides as before.
//!
//! The asks cost a walk of the context's page tables each (about 0.1 ms for
//! the handler above), so they are made only where CPU says "call", and
//! once when it starts to rest after doing something (`Touches`): what a
//! call touched after the last ask must not confirm the next burst. A
//! context is asked at most every `ASK_GAP`: one that maps much and keeps
//! its CPU bursting would otherwise have the daemon walk its page tables
//! at every 20 ms poll.

use std::time::Duration;

use crate::Instant;

/// The least time between two asks of one context the host answered (an
/// ask it cannot answer costs nothing and holds nothing back). Its CPU
/// since the last reading is judged at the first reading after it (a call
/// seen 100 ms later: held, its pages are in already).
pub const ASK_GAP: Duration = Duration::from_millis(100);

/// Never a call below this: a context holding next to nothing.
pub const MIN_CALL_TOUCH: u64 = 1 << 20;
/// The share of what it holds in DRAM a call touches at least.
pub const CALL_TOUCH_DIVISOR: u64 = 8;

/// What the host read of a context's memory at an ask: what its processes
/// referenced since the last ask, and what they hold in DRAM (bytes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Touch {
    pub referenced: u64,
    pub resident: u64,
}

impl Touch {
    /// Whether it touched as a call does: an eighth of what it holds, and
    /// at least `MIN_CALL_TOUCH`.
    pub fn is_call(&self) -> bool {
        self.referenced >= MIN_CALL_TOUCH.max(self.resident / CALL_TOUCH_DIVISOR)
    }
}

/// The host's answer to "how much did it touch since the last ask" (the
/// ask also starts the next count); None where it cannot tell (no process,
/// not permitted, an observer without it): the CPU rule decides alone.
pub type Ask<'a> = &'a mut dyn FnMut() -> Option<Touch>;

/// An ask that never knows: readings judged by CPU alone.
pub fn unknown() -> Option<Touch> {
    None
}

/// Where the count of a resting context's touches starts: whether it was
/// asked since it last did something (a call, a wake, activity), so that
/// its next ask counts only what came after.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Touches {
    /// Whether it was asked (or its count began) with nothing done since.
    fresh: bool,
    /// When the host last answered an ask.
    asked: Option<Instant>,
}

impl Touches {
    /// It did something: the count must start again once it rests.
    pub fn did_something(&mut self) {
        self.fresh = false;
    }

    /// Asks whether a reading with a call's CPU was one: the touch, if the
    /// host can tell, says; else the CPU stands. A call leaves the count to
    /// start again; a burst with no call starts it here. None: asked less
    /// than `ASK_GAP` ago, judge it later.
    pub fn confirm(&mut self, at: Instant, ask: Ask<'_>) -> Option<(bool, Option<Touch>)> {
        if self.asked.is_some_and(|a| at.saturating_sub(a) < ASK_GAP) {
            return None;
        }
        let touch = ask();
        self.asked = touch.map(|_| at);
        let call = touch.is_none_or(|t| t.is_call());
        self.fresh = !call;
        Some((call, touch))
    }

    /// A resting reading with no call's CPU: the count starts here if it
    /// did something since it was last asked.
    pub fn rest(&mut self, at: Instant, ask: Ask<'_>) {
        if !self.fresh {
            if ask().is_some() {
                self.asked = Some(at);
            }
            self.fresh = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn a_call_touches_an_eighth_of_what_it_holds() {
        // The handler measured: 1.9-2.6 MiB at rest, 56 MiB a call, of 70.
        let rest = Touch {
            referenced: 2_600 * 1024,
            resident: 70 * MIB,
        };
        let call = Touch {
            referenced: 56 * MIB,
            resident: 70 * MIB,
        };
        assert!(!rest.is_call());
        assert!(call.is_call());
        let small = Touch {
            referenced: MIB / 2,
            resident: 2 * MIB,
        };
        assert!(!small.is_call(), "never below 1 MiB");
    }

    #[test]
    fn a_burst_starts_the_count_a_call_leaves_it_to_the_rest() {
        let at = Duration::from_secs(5);
        let mut t = Touches::default();
        let asks = std::cell::Cell::new(0);
        let mut burst = || {
            asks.set(asks.get() + 1);
            Some(Touch {
                referenced: MIB,
                resident: 64 * MIB,
            })
        };
        assert_eq!(t.confirm(at, &mut burst).map(|c| c.0), Some(false));
        t.rest(at, &mut burst);
        assert_eq!(asks.get(), 1, "counted from the burst's ask already");
        let at = at + ASK_GAP;
        let (call, _) = t
            .confirm(at, &mut || {
                Some(Touch {
                    referenced: 40 * MIB,
                    resident: 64 * MIB,
                })
            })
            .expect("asked");
        assert!(call);
        t.rest(at, &mut burst);
        assert_eq!(asks.get(), 2, "after a call, the rest's first reading asks");
        t.rest(at, &mut burst);
        assert_eq!(asks.get(), 2, "once");
    }

    #[test]
    fn unknown_touches_leave_the_cpu_to_decide() {
        let mut t = Touches::default();
        assert_eq!(
            t.confirm(Duration::ZERO, &mut unknown).map(|c| c.0),
            Some(true)
        );
    }

    #[test]
    fn a_context_is_asked_at_most_every_gap() {
        let mut t = Touches::default();
        let at = Duration::from_secs(1);
        let mut rest = || {
            Some(Touch {
                referenced: 0,
                resident: MIB,
            })
        };
        assert!(t.confirm(at, &mut rest).is_some());
        let soon = at + ASK_GAP - Duration::from_millis(1);
        assert_eq!(t.confirm(soon, &mut || panic!("asked again")), None);
        assert!(t.confirm(at + ASK_GAP, &mut unknown).is_some());
    }

    /// Where the host cannot tell (`daemon.touches` off), nothing waits:
    /// every reading is judged by its CPU at once.
    #[test]
    fn unanswered_asks_hold_nothing_back() {
        let mut t = Touches::default();
        t.rest(Duration::from_secs(1), &mut unknown);
        for ms in [1_000, 1_010, 1_020] {
            let at = Duration::from_millis(ms);
            assert_eq!(t.confirm(at, &mut unknown).map(|c| c.0), Some(true), "{ms}");
        }
    }
}
