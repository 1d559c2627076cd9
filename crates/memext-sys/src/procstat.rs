//! Whether a process is on its way out: exiting (`PF_EXITING` in the flags of
//! /proc/PID/stat) or with a SIGKILL pending (ShdPnd/SigPnd of
//! /proc/PID/status). A process tearing down its address space uses CPU and
//! frees memory, which looks like a wake; freezing it then (cgroup v1's
//! freezer holds even a killed task) would stall whoever is removing it.

use std::path::Path;

use crate::Pid;

/// `PF_EXITING` of include/linux/sched.h: getting shut down.
pub const PF_EXITING: u64 = 0x4;
const SIGKILL_BIT: u64 = 1 << (9 - 1);

/// The `flags` field (the 9th) of a /proc/PID/stat line.
pub fn stat_flags(stat: &str) -> Option<u64> {
    // The command name may hold spaces and parentheses: fields follow the last ')'.
    let rest = stat.rsplit_once(')')?.1;
    rest.split_whitespace().nth(6)?.parse().ok()
}

/// Whether /proc/PID/status shows a SIGKILL pending (for the process or a thread).
pub fn kill_pending(status: &str) -> bool {
    status.lines().any(|l| {
        let Some((key, value)) = l.split_once(':') else {
            return false;
        };
        matches!(key, "ShdPnd" | "SigPnd")
            && u64::from_str_radix(value.trim(), 16).is_ok_and(|m| m & SIGKILL_BIT != 0)
    })
}

/// Whether process `pid` (under `proc_root`) is exiting, killed, or gone.
pub fn is_going(proc_root: &Path, pid: Pid) -> bool {
    let dir = proc_root.join(pid.to_string());
    let (Ok(stat), Ok(status)) = (
        std::fs::read_to_string(dir.join("stat")),
        std::fs::read_to_string(dir.join("status")),
    ) else {
        return true;
    };
    stat_flags(&stat).is_none_or(|f| f & PF_EXITING != 0) || kill_pending(&status)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_come_after_the_last_parenthesis() {
        let stat = "4242 (a (b) c) S 1 4242 4242 0 -1 4194564 120 0 0 0 3 1 0 0 20 0 1 0";
        assert_eq!(stat_flags(stat), Some(4_194_564));
        assert_eq!(stat_flags("4242 (x) R 1"), None);
        let exiting = "7 (sh) R 1 7 7 0 -1 4194372 0 0";
        assert_ne!(stat_flags(exiting).expect("flags") & PF_EXITING, 0);
    }

    #[test]
    fn a_pending_sigkill_is_seen_in_either_mask() {
        assert!(kill_pending(
            "Name:\tx\nSigPnd:\t0000000000000000\nShdPnd:\t0000000000000100\n"
        ));
        assert!(kill_pending(
            "SigPnd:\t0000000000000100\nShdPnd:\t0000000000000000\n"
        ));
        assert!(!kill_pending(
            "SigPnd:\t0000000000000002\nShdPnd:\t0000000000004000\n"
        ));
        assert!(!kill_pending("ShdPnd:\tzz\n"));
    }

    #[test]
    fn this_process_is_not_going_and_a_missing_one_is() {
        let root = Path::new("/proc");
        assert!(!is_going(root, std::process::id()));
        assert!(is_going(root, u32::MAX - 1));
    }
}
