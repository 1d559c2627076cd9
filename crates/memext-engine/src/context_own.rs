//! What of a context's readings is its own: the faults and CPU memext
//! caused (its mover's, its refaults of what memext took) left out of what
//! the model sees.

use std::time::Duration;

use super::ContextState;
use crate::activity::Counters;
use crate::Instant;

impl ContextState {
    /// memext took memory from it at `now` (a push-out, a lowered limit): what
    /// it refaults in the next moments is memext's doing.
    pub fn took_memory(&mut self, now: Instant) {
        self.refaults.open(now);
    }

    /// memext lowered its limit to `bytes` at `now`: it took memory only
    /// if that is below what it holds (a limit trimmed to above its usage,
    /// a woken context's following what it read back, takes no page, and
    /// its CPU after it is its own, a call's included: bench/faas, session
    /// 66, 16-34 calls a run went unseen inside windows such lowerings had
    /// opened).
    pub fn lowered_to(&mut self, bytes: u64, now: Instant) {
        if self.takes_pages(bytes) {
            self.took_memory(now);
        }
    }

    /// Whether a limit of `bytes` takes pages from it: below what it holds.
    pub(crate) fn takes_pages(&self, bytes: u64) -> bool {
        bytes < self.memory.usage
    }

    /// Of `faults` and `majors` a reading shows (increments since the
    /// last), those memext caused (`faults_pending_by_memext`), taken from
    /// what is pending; the rest stays pending for the next reading.
    pub(crate) fn take_faults_by_memext(&mut self, faults: u64, majors: u64) -> (u64, u64) {
        let (pending, pending_majors) = self.faults_pending_by_memext;
        let taken = (pending.min(faults), pending_majors.min(majors));
        self.faults_pending_by_memext = (pending - taken.0, pending_majors - taken.1);
        taken
    }

    /// Its CPU time `cpu` (as the kernel counts it) at `now`, less what it
    /// spent refaulting what memext took; `faults` and `majors` (increments
    /// since the last tick) are credited likewise, unless they already are
    /// (`moving`: the mover's own).
    pub fn own_cpu(
        &mut self,
        now: Instant,
        cpu: Duration,
        faults: u64,
        majors: u64,
        moving: bool,
    ) -> Duration {
        // A lowering in the background keeps the window open while it
        // takes pages (its target below what the context held).
        if self.reclaiming.is_some_and(|b| self.takes_pages(b)) {
            self.refaults.extend(now);
        }
        let ran = self
            .cpu_seen
            .map_or(Duration::ZERO, |c| cpu.saturating_sub(c));
        self.cpu_seen = Some(cpu);
        let (faults, majors) = if moving { (0, 0) } else { (faults, majors) };
        let credit = self.refaults.credit(now, faults, majors, ran);
        self.cpu_by_memext += credit.cpu;
        self.faults_by_memext.0 += credit.faults;
        self.faults_by_memext.1 += credit.majors;
        cpu.saturating_sub(self.cpu_by_memext)
    }

    /// What the model sees: the context's counters less memext's own faults.
    pub fn counters(&self, at: Instant, cpu: Duration) -> Counters {
        Counters {
            at,
            cpu,
            pgfault: self.memory.pgfault.saturating_sub(self.faults_by_memext.0),
            pgmajfault: self
                .memory
                .pgmajfault
                .saturating_sub(self.faults_by_memext.1),
        }
    }
}
