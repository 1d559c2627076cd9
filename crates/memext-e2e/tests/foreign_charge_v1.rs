//! A charge a context did not take is no wake, on this host's real cgroups
//! (v1) and swap file. A pushed-out context whose memory someone else swaps
//! back in is charged for it (the kernel charges a page read back from swap
//! to the cgroup that swapped it out) and its wake event fires, while its
//! own processes neither run nor fault. Here that someone reads a tmpfs
//! file the context wrote (shared memory, as containers share `/dev/shm`);
//! with swap on a rotational device another context's swap-in does the
//! same through read-ahead (`bench/scale/readahead.py`). The daemon leaves
//! it pushed out. Needs root; everything is removed on drop, also on
//! failure.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use memext::daemon::observe_events::WAKE_DELTA;
use memext_cgroup::MemoryCgroup;
use memext_e2e::sandbox::TierSandbox;
use memext_e2e::toucher::Toucher;
use memext_e2e::{events_named, host_hierarchy, ScratchCgroup};

mod common;
use common::*;

const MIB: u64 = 1 << 20;

/// A file in `/dev/shm`, removed on drop.
struct ShmFile(PathBuf);

impl Drop for ShmFile {
    fn drop(&mut self) {
        std::fs::remove_file(&self.0).ok();
    }
}

/// Writes `mib` MiB of random bytes to a new tmpfs file from a shell that
/// first moves itself into `cg`: its pages are charged there.
fn shm_file_of(cg: &ScratchCgroup, mib: u64) -> ShmFile {
    let file = ShmFile(PathBuf::from(format!(
        "/dev/shm/memext-e2e-{}-foreign",
        std::process::id()
    )));
    let procs = format!("/sys/fs/cgroup/memory{}/cgroup.procs", cg.path);
    let status = Command::new("sh")
        .args([
            "-c",
            "echo $$ > \"$0\" && exec dd if=/dev/urandom of=\"$1\" bs=1M count=\"$2\" status=none",
            &procs,
        ])
        .arg(&file.0)
        .arg(mib.to_string())
        .status()
        .expect("dd");
    assert!(status.success(), "writing {}", file.0.display());
    file
}

#[test]
fn a_charge_of_someone_elses_swap_in_is_no_wake() {
    let _g = serial();
    let h = host_hierarchy().expect("hierarchy");
    let cg = ScratchCgroup::new(&h, "shm").expect("cgroup");
    let p = &cg.parent;
    let toml = format!(
        "[[select]]\ncgroup = \"{p}/*\"\nclass = \"extend\"\n\n\
         [class.extend]\nidle_after = \"2s\"\nfloor = \"1MiB\"\n\n\
         [daemon]\ncapacity = \"4GiB\"\ntick = \"500ms\"\npoll = \"20ms\"\nsocket = \"@DIR@/memext.sock\"\n\n\
         [[tiers.swapfile]]\npath = \"@DIR@/swap0\"\nsize = \"1GiB\"\npriority = 10\n"
    );
    let sb = TierSandbox::new("foreign", &toml);
    sb.up();
    // The context: one sleeping process, and 64 MiB of shared memory it
    // wrote.
    let mut t = Toucher::spawn(helper(), 1 << 20).expect("toucher");
    cg.attach(t.pid()).expect("attach");
    t.alloc().expect("alloc");
    let file = shm_file_of(&cg, 64);
    let c = cg.open().expect("open");
    let log = sb.dir.join("daemon.log");
    let mut daemon = sb.daemon("daemon.log");
    wait_for("the context pushed out", 60, || {
        c.memory().is_ok_and(|m| m.usage_bytes <= 2 * MIB)
    });
    // Past the 2 s after a push-out in which what a context charges is
    // taken for memext's own doing (its refaults).
    std::thread::sleep(Duration::from_secs(3));
    let id = cg.path.to_string();
    let woke = || {
        ["woke", "onset"]
            .iter()
            .flat_map(|e| events_named(&log, e))
            .filter(|e| e["context"] == id)
            .count()
    };
    assert_eq!(woke(), 0, "it woke before anyone touched its memory");
    // The wake event the daemon arms on it, armed here too: whether the
    // kernel fired it.
    let event = c.wake_event(WAKE_DELTA).expect("its event");
    let read = std::fs::read(&file.0).expect("read the file").len();
    std::thread::sleep(Duration::from_secs(3));
    let mut count = [0u8; 8];
    let fired = rustix::io::read(&event, &mut count[..]).map_or(0, |_| u64::from_ne_bytes(count));
    let log_text = || std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        fired > 0,
        "reading its {read} bytes back did not fire its event: nothing to test"
    );
    assert_eq!(
        woke(),
        0,
        "it woke when someone else read its memory back:\n{}",
        log_text()
    );
    eprintln!(
        "{} MiB read back by another; its event fired {fired} times; no wake",
        read as u64 / MIB
    );
    assert!(daemon.terminate(20).expect("exits").success());
    drop(t);
}
