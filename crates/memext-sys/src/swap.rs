//! Swap devices: /proc/swaps and swapon(2)/swapoff(2).

use std::ffi::CString;
use std::path::{Path, PathBuf};

// From <sys/swap.h>; the libc crate does not carry them.
const SWAP_FLAG_PREFER: i32 = 0x8000;
const SWAP_FLAG_PRIO_MASK: i32 = 0x7fff;
const SWAP_FLAG_PRIO_SHIFT: i32 = 0;

#[derive(Debug, thiserror::Error)]
pub enum SwapError {
    #[error("swapon {path} failed")]
    On {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("swapoff {path} failed")]
    Off {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("path {path} contains a NUL byte")]
    BadPath { path: PathBuf },
    #[error("swap priority {priority} is out of range 0..=32767")]
    BadPriority { priority: i32 },
    #[error("cannot read /proc/swaps")]
    Read(#[source] std::io::Error),
    #[error("line {line} of /proc/swaps is malformed: {text:?}")]
    Malformed { line: usize, text: String },
}

/// One active swap area, as /proc/swaps lists it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SwapArea {
    pub path: PathBuf,
    pub kind: String,
    pub size_bytes: u64,
    pub used_bytes: u64,
    pub priority: i32,
}

/// Parses the text of /proc/swaps (sizes there are in KiB).
pub fn parse_swaps(text: &str) -> Result<Vec<SwapArea>, SwapError> {
    text.lines()
        .enumerate()
        .skip(1)
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let bad = || SwapError::Malformed {
                line: i + 1,
                text: l.to_owned(),
            };
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() != 5 {
                return Err(bad());
            }
            Ok(SwapArea {
                path: PathBuf::from(unescape_octal(f[0])),
                kind: f[1].to_owned(),
                size_bytes: f[2].parse::<u64>().map_err(|_| bad())? * 1024,
                used_bytes: f[3].parse::<u64>().map_err(|_| bad())? * 1024,
                priority: f[4].parse().map_err(|_| bad())?,
            })
        })
        .collect()
}

/// /proc/swaps escapes spaces and other bytes as `\040`-style octal.
fn unescape_octal(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The swap areas active now.
pub fn active_swaps() -> Result<Vec<SwapArea>, SwapError> {
    parse_swaps(&std::fs::read_to_string("/proc/swaps").map_err(SwapError::Read)?)
}

fn cpath(path: &Path) -> Result<CString, SwapError> {
    use std::os::unix::ffi::OsStrExt;
    CString::new(path.as_os_str().as_bytes()).map_err(|_| SwapError::BadPath { path: path.into() })
}

/// Enables swapping to `path` (a device or a file that already has a swap
/// signature) at `priority`; higher priorities are used first.
pub fn swap_on(path: &Path, priority: i32) -> Result<(), SwapError> {
    if !(0..=SWAP_FLAG_PRIO_MASK).contains(&priority) {
        return Err(SwapError::BadPriority { priority });
    }
    let c = cpath(path)?;
    let flags = SWAP_FLAG_PREFER | (priority << SWAP_FLAG_PRIO_SHIFT);
    // SAFETY: `c` is a valid NUL-terminated path that outlives the call.
    let ret = unsafe { libc::swapon(c.as_ptr(), flags) };
    if ret != 0 {
        return Err(SwapError::On {
            path: path.into(),
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(())
}

/// Disables swapping to `path`, reading its pages back into memory.
pub fn swap_off(path: &Path) -> Result<(), SwapError> {
    let c = cpath(path)?;
    // SAFETY: `c` is a valid NUL-terminated path that outlives the call.
    let ret = unsafe { libc::swapoff(c.as_ptr()) };
    if ret != 0 {
        return Err(SwapError::Off {
            path: path.into(),
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_swaps() {
        let text = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n\
                    /dev/zram1                              partition\t4194300\t\t0\t\t100\n\
                    /var/lib/memext/swap\\040one             file\t\t16777212\t1024\t\t50\n";
        let s = parse_swaps(text).expect("valid");
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].path, PathBuf::from("/dev/zram1"));
        assert_eq!(s[0].priority, 100);
        assert_eq!(s[1].path, PathBuf::from("/var/lib/memext/swap one"));
        assert_eq!(s[1].size_bytes, 16777212 * 1024);
        assert_eq!(s[1].used_bytes, 1024 * 1024);
    }

    #[test]
    fn empty_proc_swaps_has_no_areas() {
        assert!(parse_swaps("Filename Type Size Used Priority\n")
            .expect("valid")
            .is_empty());
    }

    #[test]
    fn rejects_bad_priority_without_a_syscall() {
        assert!(matches!(
            swap_on(Path::new("/nonexistent"), 40000),
            Err(SwapError::BadPriority { .. })
        ));
    }
}
