//! Shared memory end to end on this host's real cgroups (v1) with a real swap
//! tier: a context whose memory is shared (MAP_SHARED|MAP_ANONYMOUS, as a
//! Python `mmap(-1, n)` or a database's shared buffers are) is pushed out, and
//! when it wakes its working set is read back before it touches it. pagemap
//! does not say which shared pages are in swap (a swapped-out shared page
//! leaves no page-table entry), so memext reads back what it recorded
//! resident and is not now. Needs root and python3; everything is removed on
//! drop, also on failure.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use memext_cgroup::MemoryCgroup;
use memext_e2e::sandbox::TierSandbox;
use memext_e2e::{events_named, host_hierarchy, ScratchCgroup};

mod common;
use common::*;

const MIB: u64 = 1 << 20;

/// A process holding `MIB` MiB of shared anonymous memory (every page
/// written: half random, half zero), serving one command per line:
/// `spin` (150 ms of CPU, no page touched), `incore` (pages in DRAM or the
/// swap cache, mincore), `touch` (every page read; major faults taken).
const HOLDER: &str = r#"
import ctypes, mmap, os, resource, sys, time
size = int(sys.argv[1]) << 20
sys.stdin.readline()  # moved into its cgroup
m = mmap.mmap(-1, size)
for i in range(0, size, 4096):
    m[i:i + 2048] = os.urandom(2048)
libc = ctypes.CDLL(None, use_errno=True)
addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
print("ready", flush=True)
for line in sys.stdin:
    cmd = line.strip()
    if cmd == "spin":
        t = time.process_time()
        while time.process_time() - t < 0.15:
            pass
        print("spun", flush=True)
    elif cmd == "incore":
        vec = (ctypes.c_ubyte * (size // 4096))()
        if libc.mincore(ctypes.c_void_p(addr), ctypes.c_size_t(size), vec) != 0:
            raise OSError(ctypes.get_errno(), "mincore")
        print("incore", sum(b & 1 for b in vec), size // 4096, flush=True)
    elif cmd == "touch":
        before = resource.getrusage(resource.RUSAGE_SELF).ru_majflt
        s = sum(m[i] for i in range(0, size, 4096))
        print("touched", resource.getrusage(resource.RUSAGE_SELF).ru_majflt - before, flush=True)
"#;

/// The holder process, killed and reaped on drop.
struct Holder {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Holder {
    fn start(cg: &ScratchCgroup, mib: u64) -> Self {
        let mut child = Command::new("python3")
            .args(["-c", HOLDER, &mib.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3");
        cg.attach(child.id()).expect("attach");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut h = Self {
            child,
            stdin,
            stdout,
        };
        assert_eq!(h.ask("go"), "ready");
        h
    }

    fn ask(&mut self, cmd: &str) -> String {
        writeln!(self.stdin, "{cmd}").expect("write to the holder");
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("read the holder");
        assert!(!line.is_empty(), "the holder exited on {cmd:?}");
        line.trim().to_owned()
    }

    /// (pages in DRAM or the swap cache, pages).
    fn incore(&mut self) -> (u64, u64) {
        let line = self.ask("incore");
        let n: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .map(|w| w.parse().expect("number"))
            .collect();
        (n[0], n[1])
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_context_whose_memory_is_shared_is_read_back_when_it_wakes() {
    let _g = serial();
    let h = host_hierarchy().expect("hierarchy");
    let cg = ScratchCgroup::new(&h, "shm").expect("cgroup");
    let tiers = "[[tiers.swapfile]]\npath = \"@DIR@/swap0\"\nsize = \"512MiB\"\npriority = 10\n";
    let sb = TierSandbox::new("shm", &config(&cg, tiers));
    sb.up();
    let mut holder = Holder::start(&cg, 96);
    let c = cg.open().expect("open");
    let log = sb.dir.join("daemon.log");
    let mut daemon = sb.daemon("daemon.log");
    let log_text = || std::fs::read_to_string(&log).unwrap_or_default();

    // Pushed out: in swap, and out of the swap cache (written back).
    memext_e2e::sandbox::wait_for("the push-out", 40, || {
        c.memory().is_ok_and(|m| m.swap_bytes >= 72 * MIB) && {
            let (n, total) = holder.incore();
            n * 4 <= total
        }
    })
    .unwrap_or_else(|e| panic!("{e}: {:?}\n{}", c.memory(), log_text()));
    let (before, total) = holder.incore();

    // It wakes: CPU work, no page touched. Its shared memory comes back.
    assert_eq!(holder.ask("spin"), "spun");
    memext_e2e::sandbox::wait_for("the working set back in DRAM", 10, || {
        let (n, total) = holder.incore();
        n * 10 >= total * 9
    })
    .unwrap_or_else(|e| panic!("{e}: {:?}\n{}", holder.incore(), log_text()));
    let touched = holder.ask("touch");
    let majors: u64 = touched
        .split_whitespace()
        .nth(1)
        .and_then(|w| w.parse().ok())
        .expect("major faults");
    assert!(
        majors * 20 <= total,
        "{majors} major faults on {total} pages after the read-back"
    );
    let reads = events_named(&log, "read-back");
    assert!(
        reads
            .iter()
            .any(|e| e["shared_bytes"].as_u64().unwrap_or(0) >= 64 * MIB),
        "no read-back of the shared memory: {reads:?}"
    );
    let status = daemon.terminate(20).expect("daemon exits on SIGTERM");
    assert!(status.success(), "{status:?}\n{}", log_text());
    eprintln!("{before} of {total} pages in DRAM pushed out; {majors} major faults on the touch after the read-back");
}
