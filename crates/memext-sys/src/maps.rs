//! /proc/PID/maps: which address ranges a process maps and what backs them.
//! The parser is pure; [`read_maps`] is the only I/O.

use crate::{AddrRange, Pid};

#[derive(Debug, thiserror::Error)]
pub enum MapsError {
    #[error("process {pid} no longer exists")]
    Vanished { pid: Pid },
    #[error("cannot read /proc/{pid}/maps")]
    Read {
        pid: Pid,
        #[source]
        source: std::io::Error,
    },
    #[error("line {line} of a maps file is malformed: {text:?}")]
    Malformed { line: usize, text: String },
}

/// What backs a mapping.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum Backing {
    /// Private or shared anonymous memory without a name, or `[anon:NAME]`.
    Anonymous,
    Heap,
    Stack,
    /// `[vdso]`, `[vvar]`, `[vsyscall]` and other kernel-provided mappings.
    Special(String),
    /// A file (possibly deleted, or a memfd / SysV segment).
    File(String),
}

/// One line of /proc/PID/maps.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Mapping {
    pub range: AddrRange,
    pub readable: bool,
    pub writable: bool,
    pub executable: bool,
    pub shared: bool,
    pub offset: u64,
    pub inode: u64,
    pub backing: Backing,
}

/// Names the kernel gives shared-memory objects in maps: MAP_SHARED |
/// MAP_ANONYMOUS, SysV segments, memfds; and POSIX shm (tmpfs at /dev/shm).
const SHARED_MEMORY_NAMES: [&str; 4] = ["/dev/zero (deleted)", "/SYSV", "/memfd:", "/dev/shm/"];

impl Mapping {
    /// Private anonymous memory (heap, stack, anonymous mmap): what swap holds
    /// when the process is pushed out, and what a working set is made of.
    pub fn is_private_anonymous(&self) -> bool {
        !self.shared
            && self.readable
            && matches!(
                self.backing,
                Backing::Anonymous | Backing::Heap | Backing::Stack
            )
    }

    /// Shared memory (MAP_SHARED|MAP_ANONYMOUS, which the kernel names
    /// `/dev/zero (deleted)`, a SysV segment, a memfd, POSIX shm): charged
    /// and swapped as anonymous memory is (a database's shared buffers, a
    /// Python `mmap(-1, n)`), but pagemap does not say which of its pages are
    /// in swap (a swapped-out page leaves no entry in the page table). Told by
    /// the name only, never by opening it: a container's own file mapped
    /// under such a name is the container's own memory either way.
    pub fn is_shared_memory(&self) -> bool {
        self.shared
            && self.readable
            && matches!(&self.backing, Backing::File(p)
                if SHARED_MEMORY_NAMES.iter().any(|n| p.starts_with(n)))
    }

    /// A private mapping of a file (a library's data and relocations, the
    /// program's own): its pages are the file's until the process writes
    /// one, which is then anonymous memory of the process's own, swapped as
    /// any other and shown as swapped by pagemap. MADV_WILLNEED does not read
    /// such a page back: on a file mapping it reads the file ahead instead.
    pub fn is_private_file(&self) -> bool {
        !self.shared && self.readable && matches!(self.backing, Backing::File(_))
    }

    /// Memory that swap holds when the process is pushed out: its private
    /// anonymous memory and the shared memory it maps.
    pub fn is_swappable(&self) -> bool {
        self.is_private_anonymous() || self.is_shared_memory()
    }
}

/// Parses the whole text of a maps file.
pub fn parse_maps(text: &str) -> Result<Vec<Mapping>, MapsError> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            parse_line(l).ok_or_else(|| MapsError::Malformed {
                line: i + 1,
                text: l.to_owned(),
            })
        })
        .collect()
}

fn parse_line(line: &str) -> Option<Mapping> {
    // start-end perms offset dev inode [path...]
    let mut fields = line.splitn(6, ' ');
    let (start, end) = fields.next()?.split_once('-')?;
    let perms = fields.next()?.as_bytes();
    let offset = u64::from_str_radix(fields.next()?, 16).ok()?;
    let _dev = fields.next()?;
    let inode = fields.next()?.parse().ok()?;
    let path = fields.next().unwrap_or("").trim_start();
    if perms.len() != 4 {
        return None;
    }
    let range = AddrRange {
        start: u64::from_str_radix(start, 16).ok()?,
        end: u64::from_str_radix(end, 16).ok()?,
    };
    if range.start > range.end {
        return None;
    }
    let backing = match path {
        "" => Backing::Anonymous,
        "[heap]" => Backing::Heap,
        p if p.starts_with("[stack") => Backing::Stack,
        p if p.starts_with("[anon:") => Backing::Anonymous,
        p if p.starts_with('[') => Backing::Special(p.to_owned()),
        p => Backing::File(p.to_owned()),
    };
    Some(Mapping {
        range,
        readable: perms[0] == b'r',
        writable: perms[1] == b'w',
        executable: perms[2] == b'x',
        shared: perms[3] == b's',
        offset,
        inode,
        backing,
    })
}

/// Reads and parses /proc/PID/maps.
pub fn read_maps(pid: Pid) -> Result<Vec<Mapping>, MapsError> {
    read_maps_in(std::path::Path::new("/proc"), pid)
}

/// Reads and parses PROC_ROOT/PID/maps (a proc file system mounted elsewhere).
pub fn read_maps_in(proc_root: &std::path::Path, pid: Pid) -> Result<Vec<Mapping>, MapsError> {
    match std::fs::read_to_string(proc_root.join(pid.to_string()).join("maps")) {
        Ok(text) => parse_maps(&text),
        Err(e) if vanished(&e) => Err(MapsError::Vanished { pid }),
        Err(e) => Err(MapsError::Read { pid, source: e }),
    }
}

pub(crate) fn vanished(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOENT) | Some(libc::ESRCH))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
55d0c2a00000-55d0c2a28000 r--p 00000000 fe:01 1311243                    /usr/bin/redis-server
55d0c4b1e000-55d0c4c3f000 rw-p 00000000 00:00 0                          [heap]
7f1c8a000000-7f1c8e000000 rw-p 00000000 00:00 0 
7f1c8e000000-7f1c8e001000 ---p 00000000 00:00 0 
7f1c90000000-7f1c90100000 rw-s 00000000 00:01 2049                       /dev/zero (deleted)
7f1c91000000-7f1c91002000 rw-p 00000000 00:00 0                          [anon:jemalloc]
7ffd7a1d4000-7ffd7a1f5000 rw-p 00000000 00:00 0                          [stack]
7ffd7a1f9000-7ffd7a1fb000 r-xp 00000000 00:00 0                          [vdso]
ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]
";

    #[test]
    fn parses_every_kind_of_line() {
        let maps = parse_maps(SAMPLE).expect("valid sample");
        assert_eq!(maps.len(), 9);
        assert_eq!(
            maps[0].backing,
            Backing::File("/usr/bin/redis-server".into())
        );
        assert_eq!(maps[0].inode, 1311243);
        assert_eq!(maps[1].backing, Backing::Heap);
        assert_eq!(
            maps[2].range,
            AddrRange {
                start: 0x7f1c8a000000,
                end: 0x7f1c8e000000
            }
        );
        assert_eq!(maps[2].backing, Backing::Anonymous);
        assert!(maps[4].shared);
        assert_eq!(maps[5].backing, Backing::Anonymous);
        assert_eq!(maps[6].backing, Backing::Stack);
        assert_eq!(maps[7].backing, Backing::Special("[vdso]".into()));
    }

    #[test]
    fn selects_private_anonymous_memory_only() {
        let maps = parse_maps(SAMPLE).expect("valid sample");
        let anon: Vec<usize> = maps
            .iter()
            .enumerate()
            .filter(|(_, m)| m.is_private_anonymous())
            .map(|(i, _)| i)
            .collect();
        // heap, anonymous mmap, [anon:jemalloc], stack; not the guard page,
        // not the shared /dev/zero segment, not files or [vdso].
        assert_eq!(anon, vec![1, 2, 5, 6]);
        let private_file: Vec<usize> = maps
            .iter()
            .enumerate()
            .filter(|(_, m)| m.is_private_file())
            .map(|(i, _)| i)
            .collect();
        // The program's own file; neither [vdso] nor [vsyscall].
        assert_eq!(private_file, vec![0]);
    }

    #[test]
    fn shared_memory_is_swappable_files_are_not() {
        let text = "\
7f0000000000-7f0008000000 rw-s 00000000 00:01 2048 /dev/zero (deleted)
7f0008000000-7f0009000000 rw-s 00000000 00:01 4096 /SYSV0052e2c1 (deleted)
7f0009000000-7f000a000000 rw-s 00000000 00:01 4097 /memfd:buffers (deleted)
7f000a000000-7f000b000000 rw-s 00000000 00:1a 4098 /dev/shm/PostgreSQL.1234
7f000b000000-7f000c000000 rw-s 00000000 08:02 4099 /var/lib/db/table
7f000c000000-7f000d000000 rw-p 00000000 00:01 2049 /dev/zero (deleted)
7f000d000000-7f000e000000 rw-p 00000000 00:00 0
7f000e000000-7f000f000000 ---s 00000000 00:01 4100 /memfd:guard (deleted)
";
        let maps = parse_maps(text).expect("valid");
        let shared: Vec<bool> = maps.iter().map(Mapping::is_shared_memory).collect();
        assert_eq!(
            shared,
            [true, true, true, true, false, false, false, false],
            "a file on disk, a private mapping of /dev/zero, private anon and an unreadable segment are not"
        );
        let swappable: Vec<bool> = maps.iter().map(Mapping::is_swappable).collect();
        assert_eq!(
            swappable,
            [true, true, true, true, false, false, true, false]
        );
        let private_file: Vec<bool> = maps.iter().map(Mapping::is_private_file).collect();
        assert_eq!(
            private_file,
            [false, false, false, false, false, true, false, false]
        );
    }

    #[test]
    fn malformed_line_is_reported_with_its_number() {
        let text = "00400000-00452000 r-xp 00000000 08:02 173521 /bin/x\nnot a maps line\n";
        match parse_maps(text) {
            Err(MapsError::Malformed { line, .. }) => assert_eq!(line, 2),
            other => panic!("expected Malformed, got {other:?}"),
        }
    }

    #[test]
    fn reversed_range_is_malformed() {
        assert!(parse_maps("2000-1000 rw-p 00000000 00:00 0\n").is_err());
    }

    #[test]
    fn own_maps_contain_the_stack() {
        let maps = read_maps(std::process::id()).expect("own maps");
        assert!(maps.iter().any(|m| m.backing == Backing::Stack));
    }
}
