//! The daemon's page moves, paced: `process_madvise` advice and reads
//! through page tables (`memext_sys::populate`) given in batches, held to a
//! bandwidth cap, and stopped between batches when the caller's `stop` says
//! so (a wake's read-back waits for nothing longer than a batch).

use std::time::{Duration, Instant};

use memext_sys::madvise::{advise, Advice, MadviseError, Refusals};
use memext_sys::pidfd::ProcessHandle;
use memext_sys::populate::{populate, PopulateError};
use memext_sys::AddrRange;

/// Pages are moved in batches of at most this many bytes.
const BATCH_BYTES: u64 = 16 << 20;

/// A paced move (a bandwidth cap: a move no wake waits for) goes in batches
/// of at most this many bytes, so that a wake's read-back queued behind it
/// waits for one of them at most: at 16 MiB a push-out's batch was paced to
/// 62 ms (256 MiB/s) and a predicted read-back's to 31 ms, and in session
/// 75's bench/faas runs 38-42 wakes a run waited over 10 ms behind such
/// moves (a median cold call 58 ms, those up to 190).
const PACED_BATCH_BYTES: u64 = 2 << 20;

/// How often a paced move's wait for its bandwidth looks at its `stop`.
const LOOK_EVERY: Duration = Duration::from_millis(2);

/// The batch size of a move at `bandwidth` (0: not paced).
fn batch_bytes(bandwidth: u64) -> u64 {
    if bandwidth > 0 {
        PACED_BATCH_BYTES
    } else {
        BATCH_BYTES
    }
}

/// Paces `bytes` done since `t0` to `bandwidth` bytes per second (0: no
/// pacing), looking at `stop` every [`LOOK_EVERY`] while it waits; whether
/// `stop` said so (then it waited no longer).
pub(super) fn pace(
    t0: Instant,
    bytes: u64,
    bandwidth: u64,
    mut stop: impl FnMut() -> bool,
) -> bool {
    if bandwidth == 0 {
        return false;
    }
    let due = Duration::from_secs_f64(bytes as f64 / bandwidth as f64);
    while let Some(wait) = due.checked_sub(t0.elapsed()).filter(|w| !w.is_zero()) {
        if stop() {
            return true;
        }
        std::thread::sleep(wait.min(LOOK_EVERY));
    }
    false
}

/// What one [`advise_paced`] did.
#[derive(Default)]
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

/// `ranges` in groups of whole ranges, each group closed once it holds
/// `limit` bytes or more (advice is given range by range: a range is not split).
fn groups(ranges: &[AddrRange], limit: u64) -> Vec<&[AddrRange]> {
    let (mut out, mut from, mut bytes) = (Vec::new(), 0, 0);
    for (i, r) in ranges.iter().enumerate() {
        bytes += r.len();
        if bytes >= limit {
            out.push(&ranges[from..=i]);
            (from, bytes) = (i + 1, 0);
        }
    }
    if from < ranges.len() {
        out.push(&ranges[from..]);
    }
    out
}

/// Gives `advice` to `work` (per pid) in batches ([`batch_bytes`]; one
/// range for `Advice::Collapse`: a 2 MiB block takes some 5-10 ms to
/// collapse here), paced to `bandwidth` bytes per second (0: no pacing). Stops early (returning
/// what it did) when `stop` says so: after a batch, and while it waits for
/// the bandwidth. A process that has exited is passed over.
pub(super) fn advise_paced(
    work: &[(u32, Vec<AddrRange>)],
    advice: Advice,
    bandwidth: u64,
    mut stop: impl FnMut() -> bool,
) -> Result<Paced, String> {
    let limit = if advice == Advice::Collapse {
        1
    } else {
        batch_bytes(bandwidth)
    };
    let t0 = Instant::now();
    let (mut bytes, mut out) = (0u64, Paced::default());
    let last_pid = work.len().saturating_sub(1);
    'pids: for (p, (pid, ranges)) in work.iter().enumerate() {
        let handle = match ProcessHandle::open(*pid) {
            Ok(h) => h,
            Err(memext_sys::pidfd::PidfdError::Vanished { .. }) => continue,
            Err(e) => return Err(e.to_string()),
        };
        let batches = groups(ranges, limit);
        let last_batch = batches.len().saturating_sub(1);
        for (b, batch) in batches.into_iter().enumerate() {
            match advise(&handle, batch, advice) {
                Ok(o) => {
                    bytes += o.bytes;
                    out.refused.add(o.refused);
                    out.skipped.extend(o.skipped.iter().map(|r| (*pid, *r)));
                }
                Err(MadviseError::Vanished { .. }) => continue 'pids,
                Err(e) => return Err(e.to_string()),
            }
            out.done.extend(batch.iter().map(|r| (*pid, *r)));
            let more = p < last_pid || b < last_batch;
            if more && (pace(t0, bytes, bandwidth, &mut stop) || stop()) {
                out.stopped = true;
                break 'pids;
            }
        }
    }
    out.pages = bytes / memext_sys::page_size();
    Ok(out)
}

/// Maps `work` (per pid) into its processes' page tables by reading it
/// (`memext_sys::populate`), in batches ([`batch_bytes`]) paced to
/// `bandwidth` bytes per second (0: no pacing); stops when `stop` says so,
/// after a batch or while it waits for the bandwidth. Returns what it mapped, the faults that took and whether it stopped.
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
        for batch in batches(ranges, batch_bytes(bandwidth)) {
            match populate(&handle, &batch) {
                Ok(p) => {
                    out.pages += p.pages;
                    out.faults.0 += p.faults.0;
                    out.faults.1 += p.faults.1;
                }
                Err(PopulateError::Vanished { .. }) => break,
                Err(e) => return Err(e.to_string()),
            }
            let stopped = pace(t0, out.pages * page, bandwidth, &mut stop);
            out.seconds = t0.elapsed().as_secs_f64();
            if stopped || stop() {
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
        // 10 MiB at 100 MiB/s: 100 ms.
        assert!(!pace(t0, 10 << 20, 100 << 20, || false));
        let took = t0.elapsed();
        assert!(
            took >= Duration::from_millis(99) && took < Duration::from_millis(400),
            "{took:?}"
        );
    }

    #[test]
    fn a_wait_for_the_bandwidth_ends_when_stop_says_so() {
        let t0 = Instant::now();
        let mut looks = 0;
        // 10 MiB at 1 MiB/s would be 10 s; stop says so at its third look.
        let stopped = pace(t0, 10 << 20, 1 << 20, || {
            looks += 1;
            looks == 3
        });
        let took = t0.elapsed();
        assert!(stopped);
        assert!(took < Duration::from_millis(500), "{took:?}");
        assert!(!pace(t0, 10 << 20, 0, || true), "no bandwidth, no wait");
    }

    #[test]
    fn a_paced_move_gives_way_after_its_first_small_batch_even_while_it_waits() {
        let buf = vec![1u8; 8 << 20];
        let work = vec![(std::process::id(), own_blocks(&buf))];
        // At 1 MiB/s the first 2 MiB are due at 2 s: the wait looks at stop.
        let t0 = Instant::now();
        let paced = advise_paced(&work, Advice::WillNeed, 1 << 20, || true).expect("willneed");
        let took = t0.elapsed();
        assert!(paced.stopped);
        assert_eq!(paced.done.len(), 1, "one block of the three, then stopped");
        assert!(took < Duration::from_millis(500), "{took:?}");
        // Not paced (a wake's read-back), the three blocks are one batch.
        let whole = advise_paced(&work, Advice::WillNeed, 0, || true).expect("willneed");
        assert!(!whole.stopped && whole.done.len() == 3);
    }

    #[test]
    fn groups_close_at_their_limit_without_splitting_a_range() {
        let r = |a: u64, b: u64| AddrRange::new(a << 12, b << 12);
        let ranges = [r(0, 3), r(10, 12), r(20, 26), r(30, 31)];
        let got = groups(&ranges, 4 << 12);
        assert_eq!(got, vec![&ranges[0..2], &ranges[2..3], &ranges[3..4]]);
        assert!(groups(&[], 4 << 12).is_empty());
    }
}
