//! The daemon's page moves, paced: `process_madvise` advice and reads
//! through page tables (`memext_sys::populate`) given in batches, held to a
//! bandwidth cap, and stopped between batches when the caller's `stop` says
//! so (a wake's read-back waits for the batch under way at most).

use std::time::{Duration, Instant};

use memext_sys::madvise::{advise, Advice, MadviseError, Refusals};
use memext_sys::pidfd::ProcessHandle;
use memext_sys::populate::{populate, PopulateError};
use memext_sys::AddrRange;

/// Pages are moved in batches of at most this many bytes.
const BATCH_BYTES: u64 = 16 << 20;

/// Paces `bytes` done since `t0` to `bandwidth` bytes per second.
pub(super) fn pace(t0: Instant, bytes: u64, bandwidth: u64) {
    if bandwidth == 0 {
        return;
    }
    let due = Duration::from_secs_f64(bytes as f64 / bandwidth as f64);
    if let Some(wait) = due.checked_sub(t0.elapsed()) {
        std::thread::sleep(wait);
    }
}

/// What one [`advise_paced`] did.
pub(super) struct Paced {
    pub(super) pages: u64,
    /// Ranges the kernel refused or skipped, by its error (see `AdviseOutcome`).
    pub(super) refused: Refusals,
    /// Those ranges, per pid.
    pub(super) skipped: Vec<(u32, AddrRange)>,
    /// The ranges advised, per pid.
    pub(super) done: Vec<(u32, AddrRange)>,
    /// `stop` ended it before the end of `work`.
    pub(super) stopped: bool,
}

/// Gives `advice` to `work` (per pid) in paced batches (`bandwidth` 0: no
/// pacing). Stops early (returning what it did) when `stop` says so between
/// batches: of 16 MiB, or of one range for `Advice::Collapse` (a 2 MiB block
/// takes some 5-10 ms to collapse here: a batch of them would hold the
/// caller's stop back for tens of ms).
pub(super) fn advise_paced(
    work: &[(u32, Vec<AddrRange>)],
    advice: Advice,
    bandwidth: u64,
    mut stop: impl FnMut() -> bool,
) -> Result<Paced, String> {
    let page = memext_sys::page_size();
    let batch_limit = if advice == Advice::Collapse {
        1
    } else {
        BATCH_BYTES
    };
    let t0 = Instant::now();
    let (mut bytes, mut done) = (0u64, Vec::new());
    let (mut refused, mut skipped) = (Refusals::default(), Vec::new());
    for (pid, ranges) in work {
        let handle = match ProcessHandle::open(*pid) {
            Ok(h) => h,
            Err(memext_sys::pidfd::PidfdError::Vanished { .. }) => continue,
            Err(e) => return Err(e.to_string()),
        };
        let mut batch: Vec<AddrRange> = Vec::new();
        let mut batch_bytes = 0;
        let mut flush =
            |batch: &mut Vec<AddrRange>, batch_bytes: &mut u64| -> Result<bool, String> {
                match advise(&handle, batch, advice) {
                    Ok(out) => {
                        bytes += out.bytes;
                        refused.add(out.refused);
                        skipped.extend(out.skipped.iter().map(|r| (*pid, *r)));
                    }
                    Err(MadviseError::Vanished { .. }) => return Ok(false),
                    Err(e) => return Err(e.to_string()),
                }
                done.extend(batch.iter().map(|r| (*pid, *r)));
                batch.clear();
                *batch_bytes = 0;
                pace(t0, bytes, bandwidth);
                Ok(true)
            };
        for r in ranges {
            batch.push(*r);
            batch_bytes += r.len();
            if batch_bytes < batch_limit {
                continue;
            }
            let vanished = !flush(&mut batch, &mut batch_bytes)?;
            if vanished || stop() {
                return Ok(Paced {
                    pages: bytes / page,
                    refused,
                    skipped,
                    done,
                    stopped: !vanished,
                });
            }
        }
        if !batch.is_empty() {
            flush(&mut batch, &mut batch_bytes)?;
        }
    }
    Ok(Paced {
        pages: bytes / page,
        refused,
        skipped,
        done,
        stopped: false,
    })
}

/// Maps `work` (per pid) into its processes' page tables by reading it
/// (`memext_sys::populate`), in batches of 16 MiB paced to `bandwidth`
/// bytes per second (0: no pacing); stops between batches when `stop` says
/// so. Returns what it mapped, the faults that took and whether it stopped.
pub(super) fn populate_paced(
    work: &[(u32, Vec<AddrRange>)],
    bandwidth: u64,
    mut stop: impl FnMut() -> bool,
) -> Result<Populated, String> {
    let page = memext_sys::page_size();
    let t0 = Instant::now();
    let mut out = Populated::default();
    for (pid, ranges) in work {
        let handle = match ProcessHandle::open(*pid) {
            Ok(h) => h,
            Err(memext_sys::pidfd::PidfdError::Vanished { .. }) => continue,
            Err(e) => return Err(e.to_string()),
        };
        for batch in batches(ranges, BATCH_BYTES) {
            match populate(&handle, &batch) {
                Ok(p) => {
                    out.pages += p.pages;
                    out.faults.0 += p.faults.0;
                    out.faults.1 += p.faults.1;
                }
                Err(PopulateError::Vanished { .. }) => break,
                Err(e) => return Err(e.to_string()),
            }
            pace(t0, out.pages * page, bandwidth);
            out.seconds = t0.elapsed().as_secs_f64();
            if stop() {
                out.stopped = true;
                return Ok(out);
            }
        }
    }
    Ok(out)
}

/// What a populate of a context's pages did ([`populate_paced`], and the
/// mover's populate of the blocks MADV_COLLAPSE refused).
#[derive(Debug, Default)]
pub(super) struct Populated {
    pub(super) pages: u64,
    pub(super) seconds: f64,
    /// The faults reading them took, (all, major): counted by the kernel to
    /// the context as its own (`PopulateOutcome::faults`).
    pub(super) faults: (u64, u64),
    /// `stop` ended it before the end of its work.
    pub(super) stopped: bool,
}

/// `ranges` in batches of at most `limit` bytes each, a longer range split.
fn batches(ranges: &[AddrRange], limit: u64) -> Vec<Vec<AddrRange>> {
    let (mut out, mut batch, mut bytes) = (Vec::new(), Vec::new(), 0);
    for r in ranges {
        let mut at = r.start;
        while at < r.end {
            let end = r.end.min(at + (limit - bytes));
            batch.push(AddrRange::new(at, end));
            bytes += end - at;
            at = end;
            if bytes == limit {
                out.push(std::mem::take(&mut batch));
                bytes = 0;
            }
        }
    }
    if !batch.is_empty() {
        out.push(batch);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use memext_engine::workingset::CHUNK_BYTES;

    #[test]
    fn batches_hold_at_most_their_limit_and_split_a_longer_range() {
        let r = |a: u64, b: u64| AddrRange::new(a << 12, b << 12);
        let limit = 4 << 12;
        assert_eq!(
            batches(&[r(0, 3), r(10, 16), r(20, 21)], limit),
            vec![
                vec![r(0, 3), r(10, 11)],
                vec![r(11, 15)],
                vec![r(15, 16), r(20, 21)]
            ]
        );
        assert_eq!(batches(&[r(0, 4)], limit), vec![vec![r(0, 4)]]);
        assert!(batches(&[], limit).is_empty());
    }
    /// Three whole 2 MiB blocks of this process's own (resident) memory.
    fn own_blocks(buf: &[u8]) -> Vec<AddrRange> {
        let start = (buf.as_ptr() as u64).div_ceil(CHUNK_BYTES) * CHUNK_BYTES;
        (0..3)
            .map(|i| AddrRange::new(start + i * CHUNK_BYTES, start + (i + 1) * CHUNK_BYTES))
            .collect()
    }

    #[test]
    fn a_collapse_can_be_stopped_after_each_block() {
        let buf = vec![1u8; 8 << 20];
        let work = vec![(std::process::id(), own_blocks(&buf))];
        let collapse = advise_paced(&work, Advice::Collapse, 0, || true).expect("collapse");
        assert!(collapse.stopped);
        assert_eq!(collapse.done.len(), 1, "stopped after its first block");
        // Other advice goes in batches of 16 MiB: these three blocks are one.
        let willneed = advise_paced(&work, Advice::WillNeed, 0, || true).expect("willneed");
        assert!(!willneed.stopped);
        assert_eq!(willneed.done.len(), 3);
        assert_eq!(buf[4 << 20], 1);
    }

    #[test]
    fn pacing_holds_the_bandwidth() {
        let t0 = Instant::now();
        pace(t0, 10 << 20, 100 << 20); // 10 MiB at 100 MiB/s: 100 ms
        let took = t0.elapsed();
        assert!(
            took >= Duration::from_millis(99) && took < Duration::from_millis(400),
            "{took:?}"
        );
    }
}
