//! The Senpai peer of bench/peers (`bench/peers/senpai.py`, a port of Meta's
//! PSI-driven proactive reclaim controller) on this host: bench/peers' Python
//! unit tests (the controller, its v2 memory.reclaim path, the report), and
//! the controller on a real cgroup: the limit of an idle context stepped down
//! while it shows no pressure, backed off when it stalls, and put back as it
//! was when the controller stops.

use std::process::Command;
use std::time::Instant;

use memext_cgroup::{Limit, LimitKnob, MemoryCgroup};
use memext_e2e::docker::{python_unit_tests, repo_root};
use memext_e2e::sandbox::{wait_for, ChildGuard, TierSandbox};
use memext_e2e::toucher::Toucher;
use memext_e2e::{host_hierarchy, is_root, ScratchCgroup};

#[test]
fn peers_python_unit_tests_pass() {
    python_unit_tests("bench/peers");
}

fn limit_bytes(c: &impl MemoryCgroup) -> Option<u64> {
    match c.read_limit(LimitKnob::V1Limit).expect("limit") {
        Limit::Bytes(b) => Some(b),
        Limit::Max => None,
    }
}

#[test]
fn senpai_steps_an_idle_limit_down_backs_off_under_stall_and_restores_it() {
    assert!(is_root(), "the peers e2e tests need root");
    let h = host_hierarchy().expect("hierarchy");
    if h.version != memext_cgroup::Version::V1 {
        return; // the v1 knob is what this host has; v2 runs in the VM suite
    }
    let sb = TierSandbox::new(
        "senpai",
        "[[tiers.swapfile]]\npath = \"@DIR@/swap0\"\nsize = \"256MiB\"\npriority = 10\n",
    );
    sb.up();
    let cg = ScratchCgroup::new(&h, "noise").expect("cgroup");
    let mut t = Toucher::spawn(
        std::path::Path::new(env!("CARGO_BIN_EXE_memext-e2e")),
        64 << 20,
    )
    .expect("toucher");
    cg.attach(t.pid()).expect("attach");
    t.alloc().expect("alloc");
    let c = cg.open().expect("open");
    let before = c.memory().expect("memory").usage_bytes;
    assert_eq!(limit_bytes(&c), None, "a fresh cgroup is unlimited");
    // Faster than the published defaults (6 s, 1%) so that the test is short:
    // a probe every second of at most 20%.
    let mut senpai = ChildGuard(
        Command::new("python3")
            .arg(repo_root().join("bench/peers/senpai.py"))
            .arg(cg.path.as_str())
            .args(["--interval", "1", "--max-probe", "0.2", "--min-size"])
            .arg((8u64 << 20).to_string())
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("start senpai"),
    );
    wait_for("the limit stepped down to half", 20, || {
        limit_bytes(&c).is_some_and(|l| l <= before / 2)
    })
    .expect("senpai probes down an idle context");
    let low = limit_bytes(&c).expect("limited");
    // The context wakes and touches all 64 MiB: it stalls on swap-ins at the
    // low limit, and Senpai backs off.
    let start = Instant::now();
    let touch = t.touch().expect("touch");
    assert!(touch.major_faults > 0, "the touch did not stall: {touch:?}");
    wait_for("the limit backed off", 10, || {
        limit_bytes(&c).is_some_and(|l| l > low)
    })
    .unwrap_or_else(|e| {
        panic!(
            "{e}: limit {low} after the probes, {:?} now, touch took {:?}",
            limit_bytes(&c),
            start.elapsed()
        )
    });
    let st = senpai.terminate(10).expect("senpai exits on SIGTERM");
    assert!(st.success(), "{st:?}");
    assert_eq!(limit_bytes(&c), None, "the original limit is put back");
    drop(t);
}
