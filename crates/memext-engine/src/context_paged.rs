//! Whether a context is out of DRAM: marked so as memext lowers its limit,
//! or as a sample shows its pages in swap.

use super::{ContextState, OUT_SWAPPED_BYTES};
use crate::model::{State, Transition};
use crate::Class;

impl ContextState {
    /// Whether `paged` bytes of it out of DRAM make it out (or, active,
    /// squeezed): an extend context on a host meant to be full or with
    /// `fast_wakes`, not held (held, it is in but for what its read-back
    /// missed), with at least `OUT_SWAPPED_BYTES` out.
    fn counts_out(&self, paged: u64) -> bool {
        (self.params.fast_wakes || self.fills_room())
            && self.class == Class::Extend
            && self.held.is_none()
            && paged >= OUT_SWAPPED_BYTES
    }

    /// memext lowers its limit to `bytes`, below what it has: where that
    /// takes as much as a sample would read as paged out (`note_paged_out`),
    /// it is so from now on, not from the next tick's sample: idle, out;
    /// active, squeezed. Watched between ticks while its pages go and after
    /// (`Engine::watched`), its next call is seen as it comes and its pages
    /// read back in bulk. (bench/faas, session 58: calls that came 0.02-1.7
    /// s after a wake's room had lowered their resting function were seen
    /// only at the next tick, their pages faulted in one by one: 80-116 ms,
    /// where a read-back makes a cold call 30-40 ms; 2-4 of a run's 10
    /// slowest calls. Session 59: such wakes seen at a tick fell from 1-7 a
    /// run to 0, p50 and p99 within their spread.)
    pub fn note_lowered(&mut self, bytes: u64) {
        let taken = self.charged().saturating_sub(bytes);
        if !self.counts_out(taken) || self.out {
            return;
        }
        match self.model.state {
            State::Idle => self.out = true,
            State::Active => self.squeezed = true,
            State::Waking => {}
        }
    }

    /// With `fast_wakes`, a context with its pages in swap is out all the
    /// same whoever put them there: mostly the kernel, at the limit memext
    /// wrote (the postgres x burst scenario: of 31-34 noise wakes a
    /// run, 3-6 were read back). Idle, it is then watched between ticks
    /// (such a wake was seen only at a tick, by CPU time it hardly got at
    /// its class's weight: a median 0.6-0.8 s after its touch began); at a
    /// wake or an onset (`transition`, this tick's) its pages are read back in
    /// bulk, into a limit sized for all of them (it faulted them back page
    /// by page against a limit sized from the little it kept). `moving`:
    /// the mover has a job for it.
    ///
    /// So on a host meant to be full (`when-needed`), where the parent at
    /// its cap pages out whatever its reclaim picks. In bench/faas, 24-53
    /// of some 270 wakes a run were seen only at a tick, a median 0.4 s
    /// (up to 1 s) after the call had come; half of those functions had
    /// been paged out by the kernel, not by memext (so not out, not
    /// watched). Those calls took a median 165-190 ms, against 95-103 ms
    /// for wakes seen between ticks.
    pub fn note_paged_out(&mut self, transition: Option<Transition>, moving: bool) {
        let paged_out = !moving && self.counts_out(self.memory.swapped);
        let settled_idle = transition.is_none() && self.model.state == State::Idle;
        // Woken at a tick before it was marked so (rested at its floor, it
        // gave no push-out as it turned idle, and its wake came at the next
        // tick): its pages in swap come back now, as an onset's do, not as
        // it faults them in against its floor (bench/faas, session 55: a
        // burst of nine calls at a 4 MiB floor, 12.6k faults and 76-94 ms of
        // CPU each).
        let woke = transition == Some(Transition::Woke);
        if paged_out && (settled_idle || woke || transition == Some(Transition::Onset)) {
            self.out = true;
        }
        // On a host meant to be full, paged out for room as it rested
        // between calls and now idle: pushed out like an idle one, watched
        // and read back at its wake (left squeezed, its wakes were seen only
        // at a tick: 188 of 223 wakes in a bench/faas run, against 54 of 278
        // before quiet contexts rested).
        if transition == Some(Transition::BecameIdle) && self.squeezed && self.fills_room() {
            self.out = true;
            self.squeezed = false;
        }
    }
}
