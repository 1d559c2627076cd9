//! A task waiting in the kernel's OOM wait at a limit memext wrote (v1,
//! where memext turns OOM kills off) is let go at once: the daemon hears the
//! kernel's OOM event and raises the limit past where it waits. The waiter
//! here locks its pages (`mlockall`), so that reclaim at the limit can make
//! no room for it and every fault past the limit is an OOM wait; it uses no
//! CPU there, so nothing but the OOM event shows that it wants memory.
//! Needs root; everything is removed on drop, also on failure.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use memext_cgroup::{AnyCgroup, Limit, LimitKnob, MemoryCgroup};
use memext_e2e::events_named;

mod common;
use common::*;

const MIB: u64 = 1 << 20;

/// A Python process that locks all its memory, then on `go` allocates and
/// writes `mib` MiB, page by page (each page a fault of its own, locked as
/// it comes), and says `done`. Killed on drop.
struct Waiter {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

const WAITER: &str = r#"
import ctypes, sys
if ctypes.CDLL(None, use_errno=True).mlockall(3) != 0:  # MCL_CURRENT | MCL_FUTURE
    sys.exit("mlockall: errno %d" % ctypes.get_errno())
print("locked", flush=True)
sys.stdin.readline()
b = bytearray(int(sys.argv[1]) << 20)
for i in range(0, len(b), 4096):
    b[i] = 1
print("done", flush=True)
sys.stdin.readline()
"#;

impl Waiter {
    fn spawn(mib: u64) -> Self {
        let mut child = Command::new("python3")
            .args(["-c", WAITER, &mib.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            stdin,
            lines,
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn expect_line(&self, want: &str, within: Duration) -> Result<(), String> {
        match self.lines.recv_timeout(within) {
            Ok(l) if l == want => Ok(()),
            Ok(l) => Err(format!("said {l:?}, not {want:?}")),
            Err(e) => Err(format!("no {want:?} within {within:?}: {e}")),
        }
    }

    fn go(&mut self) {
        writeln!(self.stdin, "go").expect("go");
    }
}

impl Drop for Waiter {
    fn drop(&mut self) {
        // The OOM wait is killable.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn under_oom(c: &AnyCgroup) -> bool {
    c.under_oom().expect("oom_control")
}

/// With kernel events (the default): the OOM event.
#[test]
fn a_task_in_the_oom_wait_is_let_go_at_once() {
    let _g = serial();
    let_go("", Duration::from_secs(3));
}

/// Polling: `under_oom`, read at every tick.
#[test]
fn a_task_in_the_oom_wait_is_let_go_when_polling() {
    let _g = serial();
    // One wait served a tick (500 ms): 5-6 of them seen here.
    let_go("observer = \"polling\"", Duration::from_secs(10));
}

/// A context pushed out to its floor; a waiter in it (`keys`: more keys
/// of the daemon's config) faults 256 MiB of locked pages in past the limit,
/// and is done `within` (0.22-0.32 s seen here with events, 4 raises;
/// 2.4-2.9 s polling, 5-6).
fn let_go(keys: &str, within: Duration) {
    let Setup { cg, sb, t, c } = setup_with("oomwait", 64, Some("1GiB"), keys);
    let mut w = Waiter::spawn(256);
    cg.attach(w.pid()).expect("attach the waiter");
    w.expect_line("locked", Duration::from_secs(10))
        .expect("the waiter locked its memory");

    let log = sb.dir.join("daemon.log");
    let mut daemon = sb.daemon("daemon.log");
    wait_for(
        "the push-out and its limit squeeze",
        30,
        || matches!(c.read_limit(LimitKnob::V1Limit), Ok(Limit::Bytes(b)) if b < 64 * MIB),
    );
    wait_for("the reclaimer's report", 10, || {
        !events_named(&log, "reclaimed").is_empty()
    });
    assert_eq!(
        c.read_limit(LimitKnob::V1OomKillDisable)
            .expect("oom_control"),
        Limit::Bytes(1),
        "OOM kills off"
    );
    let Ok(Limit::Bytes(low)) = c.read_limit(LimitKnob::V1Limit) else {
        panic!("a limit")
    };

    // 256 MiB of locked pages past a limit of a few MiB: without the raise
    // the waiter waits for good.
    let t0 = Instant::now();
    w.go();
    let done = w.expect_line("done", Duration::from_secs(30));
    let took = t0.elapsed();
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    done.unwrap_or_else(|e| {
        panic!(
            "{e} (under_oom {}, limit {:?}); log:\n{text}",
            under_oom(&c),
            c.read_limit(LimitKnob::V1Limit)
        )
    });
    let raised = events_named(&log, "out-of-memory");
    assert!(!raised.is_empty(), "no out-of-memory event; log:\n{text}");
    assert!(
        raised[0]["limit_bytes"].as_u64().unwrap_or(0) >= low + 16 * MIB,
        "{}",
        raised[0]
    );
    assert!(!under_oom(&c));
    assert!(
        took < within,
        "the waiter took {took:?} past a limit of {low} bytes ({} OOM events); log:\n{text}",
        raised.len()
    );
    eprintln!(
        "{keys:?}: 256 MiB of locked pages past a {:.1} MiB limit in {took:?}, {} OOM wait(s) served",
        low as f64 / MIB as f64,
        raised.len()
    );

    // Removed while the daemon runs: the kernel signals every registration
    // of a cgroup that goes, the OOM event's too; that is no OOM wait.
    // (Knobs put back on SIGTERM: daemon_v1.rs.)
    drop(w);
    drop(t);
    let served = raised.len();
    memext_e2e::remove_cgroups(&cg.hierarchy, std::slice::from_ref(&cg.path));
    wait_for("the daemon to see it gone", 10, || {
        events_named(&log, "gone")
            .iter()
            .any(|e| e["context"] == cg.path.as_str())
    });
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        events_named(&log, "out-of-memory").len(),
        served,
        "the removal read as an OOM wait; log:\n{}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    let status = daemon.terminate(20).expect("daemon exits on SIGTERM");
    assert!(status.success(), "{status:?}");
}
