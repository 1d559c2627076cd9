//! Laying a context's swap slots out again (`EngineParams::relay`).
//!
//! On an asynchronous swap tier (a swap file) the kernel gives a page its
//! swap slot when the page is first written out, and the page keeps that
//! slot while it is only read: read back and paged out again clean, it goes
//! back to it unwritten. Where the first page-out was the kernel's reclaim
//! at a full cap (a host's fill: many contexts charging at once), the pages
//! of every context were laid interleaved, a few slots a run, and every
//! later read-back of a context takes a request for every few pages: in
//! bench/faas the woken read-backs ran at 666-704 MiB/s where a context laid
//! out by memext's own page-out read at 1,154-1,363 (session 81). A
//! context's memory mapped as huge pages (MADV_COLLAPSE copies each 2 MiB
//! block into a new huge page and frees the old pages with their slots) is
//! written again at its next push-out, each block in one run of slots.
//!
//! So once in its life, after its first wake's read-back (its pages are in
//! DRAM then, read at the slow rate this undoes), a context that rests again
//! is relaid: a bring-back that maps every 2 MiB block it holds whole, at
//! the mover's low priority, giving way to any wake. Not on zram, whose
//! reads are synchronous and cost the same wherever a page lies.

use super::{Engine, HostFacts};
use crate::command::{BringBack, Command};
use crate::context::{ContextState, Relay};
use crate::predict::PrefetchReason;
use crate::workingset::CHUNK_BYTES;
use crate::{ContextId, Instant};

impl Engine {
    /// The relays due this tick: contexts woken and read back once, resting
    /// now, on a host whose next swap area is a swap file; not one the
    /// mover is busy with, nor one the tick moves or lowers already.
    /// On a zram host a due relay is dropped.
    pub(super) fn relays(
        &mut self,
        commands: &[Command],
        now: Instant,
        host: &HostFacts,
        busy: &dyn Fn(&ContextId) -> bool,
    ) -> Vec<Command> {
        if !self.params.relay {
            return Vec::new();
        }
        let mut out = Vec::new();
        for t in self.contexts.values_mut() {
            if t.relay != Relay::Due {
                continue;
            }
            if host.next_swap_is_zram {
                t.relay = Relay::Done;
                continue;
            }
            let moved = commands.iter().any(|c| {
                c.id() == &t.id
                    && matches!(
                        c,
                        Command::BringBack(_) | Command::PushOut(_) | Command::Reclaim { .. }
                    )
            });
            if relay_may_go(t, now) && !moved && !busy(&t.id) {
                out.push(Command::BringBack(relay_of(t)));
            }
        }
        out
    }
}

/// What a relay needs above a context's usage under its limit: a collapse
/// charges each new huge page before it frees the pages it copied.
pub const RELAY_ROOM: u64 = 2 * CHUNK_BYTES;

/// Resting with its pages in (`is_resident`: not out, not squeezed, next
/// to nothing in swap), no lowering of its limit on its way, and room under
/// its limit for a collapse's charge. (Sent for a context its limit had
/// just taken to its floor, a relay read its 78 MiB back into a 4 MiB
/// limit, and the function died of it: bench/faas, session 81.)
fn relay_may_go(t: &ContextState, now: Instant) -> bool {
    t.rests(now)
        && t.is_resident()
        && t.reclaiming.is_none()
        && t.limit
            .is_none_or(|l| l >= t.memory.usage.saturating_add(RELAY_ROOM))
}

/// A bring-back that reads what little is out and maps every 2 MiB block
/// held whole (`map_kept`); no chunk of its own to map first (empty
/// `order`).
fn relay_of(t: &ContextState) -> BringBack {
    BringBack {
        id: t.id.clone(),
        reason: PrefetchReason::Relay,
        pids: t.pids.clone(),
        order: Vec::new(),
        bandwidth: t.params.prefetch_bandwidth,
        map_back: true,
        map_kept: true,
        from_the_end: false,
    }
}
