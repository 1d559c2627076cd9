//! A tick's sample of a context, and what the engine learns from it: its
//! transition (woke, went idle, an onset or a warm call), whether it is
//! under pressure, its growth, peak and rest, and when its working set is
//! to be recorded.

use super::{Engine, PRESSURE_MAJFLT, PRESSURE_PSI};
use crate::command::Observed;
use crate::context::{Applied, Sample};
use crate::model::{Known, State, Transition, Via};
use crate::touch::{self, Ask};
use crate::{ContextId, Instant};

impl Engine {
    /// Takes one tick's sample of a context. `moving`: the mover has a job for
    /// it now (faults counted meanwhile are memext's, not the context's).
    pub fn observe(&mut self, id: &ContextId, sample: Sample, moving: bool) -> Observed {
        self.observe_asking(id, sample, moving, false, &mut touch::unknown)
    }

    /// Takes a sample read because the kernel said the context charged
    /// memory past what memext left it: that is activity unless memext
    /// caused it (its pages moving, its refaults after a push-out).
    pub fn observe_fired(&mut self, id: &ContextId, sample: Sample, moving: bool) -> Observed {
        self.observe_asking(id, sample, moving, true, &mut touch::unknown)
    }

    /// Faults memext itself caused in `id`'s processes (its mover mapping
    /// their pages from outside), (all, major) as its cgroup counts them
    /// (`pgfault`, `pgmajfault`): the kernel counts them to the context's
    /// cgroup as its own, and the readings that show them leave them out,
    /// as the mover's while it moves the context's pages
    /// (`ContextState::faults_pending_by_memext`).
    pub fn faults_caused(&mut self, id: &ContextId, faults: (u64, u64)) {
        if let Some(t) = self.contexts.get_mut(id) {
            t.faults_pending_by_memext.0 += faults.0;
            t.faults_pending_by_memext.1 += faults.1;
        }
    }

    /// `observe` (`fired`: `observe_fired`), asking the host what the
    /// context touched where its CPU alone says it was called as it rested
    /// with its pages in (`memext_engine::touch`).
    pub fn observe_asking(
        &mut self,
        id: &ContextId,
        sample: Sample,
        moving: bool,
        fired: bool,
        ask: Ask<'_>,
    ) -> Observed {
        let ws_every = self.params.ws_interval;
        let Some(t) = self.contexts.get_mut(id) else {
            return Observed::default();
        };
        let now = sample.at;
        let m = sample.memory;
        // t.memory is still the last tick's reading (zero before the first).
        let majflt = m.pgmajfault.saturating_sub(t.memory.pgmajfault);
        let faults = m.pgfault.saturating_sub(t.memory.pgfault);
        let caused = t.take_faults_by_memext(faults, majflt);
        t.under_pressure = sample.psi_some_avg10.is_some_and(|p| p > PRESSURE_PSI)
            || (t.memory.pgmajfault > 0 && majflt - caused.1 > PRESSURE_MAJFLT);
        let by_mover = moving || t.was_moving;
        let by_memext = if by_mover { (faults, majflt) } else { caused };
        if by_mover {
            // Every fault of this reading and the next is memext's already:
            // what the mover said it caused is among them, none left over to
            // hide the context's own faults later.
            t.faults_pending_by_memext = (0, 0);
        }
        t.faults_by_memext.0 += by_memext.0;
        t.faults_by_memext.1 += by_memext.1;
        t.was_moving = moving;
        let (own, own_majors) = (faults - caused.0, majflt - caused.1);
        let cpu = sample
            .cpu
            .map(|cpu| t.own_cpu(now, cpu, own, own_majors, by_mover));
        // A sample after the read-back sees what came in.
        let read_back = t.reading_back;
        t.reading_back &= moving;
        // Its own growth only: no pages of it moving, none swapped in.
        let own_growth = !by_mover && !read_back && majflt == 0;
        t.growth.observe(now, m.usage, own_growth);
        // At rest over the reading (its state still the last one's): a call
        // starting within it counts, its first allocations are what the
        // slack is for.
        let resting = t.rests(now);
        t.rest_growth.observe(now, m.usage, own_growth && resting);
        t.memory = m;
        t.pids = sample.pids;
        // What it has counts toward its peak where memext moved none of it
        // (a read-back in flight is charged before it is used). Its own
        // swap-ins count: on v1 the kernel uncharges a page's swap slot as
        // the page is charged (`mem_cgroup_swapin_uncharge_swap`); on v2
        // the swap cache counts twice until its slot is freed, so the peak
        // may be over. (Left out with them, the peak of a job that faults
        // its own pages back at its limit, as every grow job of
        // bench/peers did before it could be admitted at its peak, would
        // be read only where it faulted none.)
        if !by_mover && !read_back {
            t.peak.observe(t.has());
        }
        let c = t.counters(now, cpu.unwrap_or_default());
        let via = if fired {
            // (A read-back done since the last sample charged it too.)
            let own = !by_mover && !read_back && !t.refaults.is_open(now);
            Via::Fired { own }
        } else {
            Via::Tick
        };
        // A frozen context neither settles nor sleeps: it waits, as it woke.
        let transition = if t.frozen {
            // Its readings while it waits are the baseline it is judged
            // from once let in, not activity.
            t.model.rebase(c);
            None
        } else {
            let known = Known {
                expected: t.held.is_some(),
                resident: t.is_resident(),
                polled: t.is_watched(),
            };
            t.model
                .observe_asking(c, &t.params.model(), via, known, ask)
        };
        match transition {
            Some(Transition::Woke) => {
                t.queue_wake(now);
                // A wake is when its knobs matter: each is sent (and checked
                // by the ledger: someone else may have taken it meanwhile)
                // again.
                t.applied = Applied::default();
            }
            Some(Transition::Onset) => t.queue_onset(now),
            _ => {}
        }
        let wants = match transition {
            // The working set is recorded before the context is pushed out.
            Some(Transition::BecameIdle) => true,
            _ => {
                t.model.state == State::Active
                    && t.last_ws.is_none_or(|l| now.saturating_sub(l) >= ws_every)
            }
        };
        if transition.is_some_and(|tr| tr != Transition::BecameIdle) {
            t.release_hold(now);
        }
        // Pushed out, or (on a host meant to be full) paged out for room
        // while active, what is resident is what memext left, not what the
        // context uses: the working set recorded before stands until it is
        // brought back. Under `when-idle` a squeezed context's working set
        // follows what it keeps, as before (bench/peers' redis x burst, in
        // rounds alternating with the previous build: no difference beyond
        // the VM's drift either way).
        let squeezed = t.squeezed && t.fills_room();
        let wants_working_set = wants && !t.out && !squeezed;
        t.note_paged_out(transition, moving);
        Observed {
            transition,
            wants_working_set,
        }
    }

    /// Adds a working-set snapshot: each process's resident ranges.
    pub fn record_working_set(
        &mut self,
        id: &ContextId,
        at: Instant,
        snapshot: &[(u32, Vec<(u64, u64)>)],
    ) {
        let Some(t) = self.contexts.get_mut(id) else {
            return;
        };
        t.ws.retain_pids(&t.pids);
        for (pid, resident) in snapshot {
            t.ws.record(at, *pid, resident);
        }
        t.last_ws = Some(at);
    }

    pub fn set_accuracy(&mut self, id: &ContextId, accuracy: f64) {
        if let Some(t) = self.contexts.get_mut(id) {
            t.accuracy = Some(accuracy);
        }
    }
}
