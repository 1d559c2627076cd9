//! The checks that run inside the throwaway cgroup-v2 VM (scripts/cgroup2-vm),
//! as its payload: memext's cgroup layer, kernel interfaces and `memext status`
//! against a real v2 kernel with a real swap disk. Prints one line per check
//! and a closing `N passed, N failed` line; exits non-zero if any failed.

use std::path::Path;
use std::process::Command;

use anyhow::{bail, ensure, Context};
use memext_cgroup::{Limit, LimitKnob, MemoryCgroup, Version};

use crate::scenario::{check_roundtrip, pageout_roundtrip};
use crate::toucher::Toucher;
use crate::{host_hierarchy, ScratchCgroup};

type Check = fn(&Path) -> anyhow::Result<()>;

#[path = "v2suite_swap.rs"]
mod swap;
use swap::{limited_swap, swap_max_keeps_anon};

pub fn run() -> anyhow::Result<()> {
    let me = std::env::current_exe().context("own path")?;
    let checks: [(&str, Check); 8] = [
        ("probe finds cgroup v2 with memory", probe),
        ("v2 limit knobs read back what was written", knobs),
        ("memory.reclaim moves a cgroup's memory to swap", reclaim),
        (
            "PAGEOUT moves 512 MiB to swap, WILLNEED brings it back",
            roundtrip,
        ),
        ("memext status lists a selected v2 cgroup", status),
        (
            "memext daemon: memory.high push-out, memory.min over anon and page cache, a wake seen by a PSI trigger, restore on SIGTERM",
            daemon,
        ),
        (
            "memory.swap.max 0 keeps a child's anon in DRAM when its parent's cap reclaims; memory.events max counts the cap's charges",
            swap_max_keeps_anon,
        ),
        (
            "a Kubernetes pod's memory.swap.max (LimitedSwap) is read, and memext never pushes it below what that keeps in DRAM",
            limited_swap,
        ),
    ];
    let (mut passed, mut failed) = (0, 0);
    for (name, check) in checks {
        match check(&me) {
            Ok(()) => {
                passed += 1;
                println!("ok - {name}");
            }
            Err(e) => {
                failed += 1;
                println!("FAIL - {name}: {e:#}");
            }
        }
    }
    println!("v2-suite: {passed} passed, {failed} failed");
    if failed > 0 {
        bail!("{failed} v2 check(s) failed");
    }
    Ok(())
}

fn probe(_: &Path) -> anyhow::Result<()> {
    let h = host_hierarchy()?;
    ensure!(h.version == Version::V2, "expected v2, probed {:?}", h);
    Ok(())
}

fn knobs(me: &Path) -> anyhow::Result<()> {
    let h = host_hierarchy()?;
    let cg = ScratchCgroup::new(&h, "knobs")?;
    let c = cg.open()?;
    for knob in [
        LimitKnob::High,
        LimitKnob::Max,
        LimitKnob::Low,
        LimitKnob::Min,
        LimitKnob::SwapMax,
        LimitKnob::ZswapMax,
    ] {
        c.write_limit(knob, Limit::Bytes(96 << 20))
            .with_context(|| format!("writing {knob}"))?;
        let got = c.read_limit(knob)?;
        ensure!(
            got == Limit::Bytes(96 << 20),
            "{knob}: wrote 96MiB, read {got}"
        );
        // Reset protections to 0 and limits to max.
        let reset = if matches!(knob, LimitKnob::Low | LimitKnob::Min) {
            Limit::Bytes(0)
        } else {
            Limit::Max
        };
        c.write_limit(knob, reset)?;
        ensure!(
            c.read_limit(knob)? == reset,
            "{knob}: reset to {reset} did not read back"
        );
    }
    // The CPU weight (the cpu controller is enabled for the children too).
    c.write_limit(LimitKnob::CpuWeight, Limit::Bytes(50))?;
    ensure!(
        c.read_limit(LimitKnob::CpuWeight)? == Limit::Bytes(50),
        "cpu.weight: wrote 50"
    );
    c.write_limit(LimitKnob::CpuWeight, Limit::Bytes(100))?;
    // The CPU quota (`cpu_max`): cpu.max's first field, the period kept.
    c.write_limit(LimitKnob::CpuMax, Limit::Bytes(30_000))?;
    ensure!(
        c.read_limit(LimitKnob::CpuMax)? == Limit::Bytes(30_000),
        "cpu.max: wrote 30000"
    );
    c.write_limit(LimitKnob::CpuMax, Limit::Max)?;
    ensure!(
        c.read_limit(LimitKnob::CpuMax)? == Limit::Max,
        "cpu.max: the quota lifted"
    );
    // The idle CPU group (`cpu_idle`): the kernel refuses a weight while
    // it is on, and back off the weight is what it was.
    c.write_limit(LimitKnob::CpuIdle, Limit::Bytes(1))?;
    ensure!(
        c.read_limit(LimitKnob::CpuIdle)? == Limit::Bytes(1),
        "cpu.idle: wrote 1"
    );
    ensure!(
        c.write_limit(LimitKnob::CpuWeight, Limit::Bytes(50))
            .is_err(),
        "cpu.weight written in an idle group"
    );
    c.write_limit(LimitKnob::CpuIdle, Limit::Bytes(0))?;
    ensure!(
        c.read_limit(LimitKnob::CpuWeight)? == Limit::Bytes(100),
        "cpu.weight after cpu.idle 0"
    );
    ensure!(
        c.write_limit(LimitKnob::V1Limit, Limit::Max).is_err()
            && c.read_limit(LimitKnob::V1CpuShares).is_err(),
        "a v1 knob was accepted on v2"
    );
    let mut t = Toucher::spawn(me, 16 << 20)?;
    cg.attach(t.pid())?;
    t.alloc()?;
    ensure!(
        c.procs()? == vec![t.pid()],
        "cgroup.procs does not list the toucher"
    );
    let m = c.memory()?;
    ensure!(
        m.anon_bytes >= 15 << 20,
        "anon {} after touching 16 MiB",
        m.anon_bytes
    );
    ensure!(
        c.cpu_usage()?.is_some_and(|d| !d.is_zero()),
        "no CPU time accounted"
    );
    ensure!(c.memory_pressure()?.is_some(), "no memory.pressure on v2");
    // The freezer (admission): frozen, read back, thawed, and the task runs.
    c.write_limit(LimitKnob::Freeze, Limit::Bytes(1))?;
    ensure!(
        c.read_limit(LimitKnob::Freeze)? == Limit::Bytes(1),
        "cgroup.freeze: wrote 1"
    );
    // Freezing completes asynchronously: cgroup.events says when it has.
    let events = cg.path.under(&h.root).join("cgroup.events");
    crate::sandbox::wait_for("cgroup.events: frozen 1", 5, || {
        std::fs::read_to_string(&events).is_ok_and(|e| e.lines().any(|l| l == "frozen 1"))
    })?;
    // The kernel counts a task frozen just before it schedules out, so the
    // last microseconds of its slice are charged after `frozen 1` shows
    // (seen under the VM's emulated CPU): let them land, then compare.
    std::thread::sleep(std::time::Duration::from_millis(100));
    let cpu = c.cpu_usage()?;
    std::thread::sleep(std::time::Duration::from_millis(300));
    ensure!(c.cpu_usage()? == cpu, "a frozen cgroup used CPU");
    c.write_limit(LimitKnob::Freeze, Limit::Bytes(0))?;
    t.spin(20)?;
    ensure!(
        c.read_limit(LimitKnob::V1Freezer).is_err(),
        "the v1 freezer was accepted on v2"
    );
    Ok(())
}

fn reclaim(me: &Path) -> anyhow::Result<()> {
    let h = host_hierarchy()?;
    let cg = ScratchCgroup::new(&h, "reclaim")?;
    let c = cg.open()?;
    let mut t = Toucher::spawn(me, 64 << 20)?;
    cg.attach(t.pid())?;
    t.alloc()?;
    let before = c.memory()?;
    let r = c.reclaim(32 << 20)?;
    let after = c.memory()?;
    ensure!(
        after.anon_bytes + (16 << 20) <= before.anon_bytes,
        "reclaim({r:?}) of 32 MiB: anon {} -> {}",
        before.anon_bytes,
        after.anon_bytes
    );
    ensure!(
        after.swap_bytes >= 16 << 20,
        "memory.swap.current {} after reclaim",
        after.swap_bytes
    );
    Ok(())
}

fn roundtrip(me: &Path) -> anyhow::Result<()> {
    let h = host_hierarchy()?;
    let r = pageout_roundtrip(&h, me, 512 << 20)?;
    println!("  {r:?}");
    let bad = check_roundtrip(&r);
    ensure!(bad.is_empty(), "{}", bad.join("; "));
    Ok(())
}

fn status(me: &Path) -> anyhow::Result<()> {
    let memext = Path::new("/bin/memext");
    ensure!(
        memext.is_file(),
        "/bin/memext is not in the VM (the runner adds it with --add)"
    );
    let h = host_hierarchy()?;
    let cg = ScratchCgroup::new(&h, "status")?;
    let mut t = Toucher::spawn(me, 32 << 20)?;
    cg.attach(t.pid())?;
    t.alloc()?;
    let cfg = "/tmp/memext-v2.toml";
    std::fs::write(
        cfg,
        format!(
            "[[select]]\ncgroup = \"{}/*\"\nclass = \"critical\"\n",
            cg.parent
        ),
    )?;
    let out = Command::new(memext)
        .args(["--config", cfg, "status", "--json", "--interval", "300ms"])
        .output()?;
    ensure!(
        out.status.success(),
        "memext status failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let row = crate::status_row(&String::from_utf8_lossy(&out.stdout), cg.path.as_str())?;
    ensure!(row["class"] == "critical", "class: {row}");
    ensure!(row["pids"] == 1, "pids: {row}");
    ensure!(
        row["resident_bytes"].as_u64().unwrap_or(0) >= 30 << 20,
        "resident: {row}"
    );
    ensure!(
        row["memory_pressure_some_avg10"].is_number(),
        "no PSI: {row}"
    );
    ensure!(row["cpu_percent"].is_number(), "no CPU: {row}");
    // And the table form renders.
    let out = Command::new(memext)
        .args(["--config", cfg, "status", "--interval", "100ms"])
        .output()?;
    ensure!(
        String::from_utf8_lossy(&out.stdout).contains(cg.path.as_str()),
        "table lacks the context"
    );
    Ok(())
}

fn daemon(me: &Path) -> anyhow::Result<()> {
    use crate::sandbox::{wait_for, ChildGuard};
    let memext = Path::new("/bin/memext");
    let h = host_hierarchy()?;
    let sleeper = ScratchCgroup::new(&h, "sleeper")?;
    let crit = ScratchCgroup::new(&h, "crit")?;
    let cfg = "/tmp/memext-daemon.toml";
    std::fs::write(
        cfg,
        format!(
            "[host]\nstate_dir = \"/tmp/memext-state\"\n\n[[select]]\ncgroup = \"{}\"\nclass = \"critical\"\n\n\
             [[select]]\ncgroup = \"{}/*\"\nclass = \"extend\"\n\n[class.extend]\nidle_after = \"2s\"\nfloor = \"16MiB\"\n\n\
             [daemon]\ncapacity = \"1GiB\"\ntick = \"500ms\"\npoll = \"20ms\"\nsocket = \"/tmp/memext.sock\"\n",
            crit.path, sleeper.parent
        ),
    )?;
    let mut t = Toucher::spawn(me, 128 << 20)?;
    sleeper.attach(t.pid())?;
    t.alloc()?;
    let mut c = Toucher::spawn(me, 32 << 20)?;
    crit.attach(c.pid())?;
    c.alloc()?;
    // Its working set is also 64 MiB of page cache (tmpfs: shared memory, as
    // a database's shared buffers are), written from inside it.
    page_cache_in(&crit, "/tmp/memext-crit-cache", 64)?;
    let (s_cg, c_cg) = (sleeper.open()?, crit.open()?);
    let mut d = ChildGuard(
        Command::new(memext)
            .args(["--config", cfg, "daemon"])
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create("/tmp/daemon.log")?)
            .spawn()?,
    );
    let log = || std::fs::read_to_string("/tmp/daemon.log").unwrap_or_default();
    wait_for(
        "the critical context's memory.min over its anon and page cache",
        60,
        || matches!(c_cg.read_limit(LimitKnob::Min), Ok(Limit::Bytes(b)) if b >= 96 << 20),
    )
    .with_context(log)?;
    // keep_anon (the critical class's default): no swap for its anon and
    // shared memory, so that a cap above it takes only its page cache.
    wait_for("the critical context's memory.swap.max at 0", 30, || {
        c_cg.read_limit(LimitKnob::SwapMax).ok() == Some(Limit::Bytes(0))
    })
    .with_context(log)?;
    wait_for("the push-out", 90, || {
        t.mapped().is_ok_and(|(res, total)| res * 5 <= total)
    })
    .with_context(log)?;
    wait_for(
        "memory.high at the floor",
        30,
        || matches!(s_cg.read_limit(LimitKnob::High), Ok(Limit::Bytes(b)) if b < 64 << 20),
    )
    .with_context(log)?;
    ensure!(
        c.mapped()?.0 * 10 >= c.mapped()?.1 * 9,
        "the critical context lost memory"
    );
    ensure!(
        s_cg.read_limit(LimitKnob::CpuWeight)? == Limit::Bytes(1)
            && c_cg.read_limit(LimitKnob::CpuWeight)? == Limit::Bytes(100),
        "cpu.weight: extend {:?}, critical {:?} (want 1 and the default 100)",
        s_cg.read_limit(LimitKnob::CpuWeight),
        c_cg.read_limit(LimitKnob::CpuWeight)
    );
    // Pushed out and watched: its wake is a kernel event (a PSI trigger on
    // its memory.pressure), not a poll.
    wait_for("the PSI trigger", 30, || {
        memext_status_has(memext, cfg, "\"wake_path\":\"psi\"")
    })
    .with_context(log)?;
    t.touch()?;
    wait_for("the bring-back", 60, || {
        t.incore().is_ok_and(|(n, total)| n * 10 >= total * 9)
    })
    .with_context(log)?;
    // Seen by the PSI trigger or, when the trigger's 1 s window is slower
    // than the tick, by the tick's CPU read: either way it is seen.
    ensure!(
        log().contains("(waking, event)") || log().contains("(waking, tick)"),
        "the wake was not seen: {}",
        log()
    );
    let st = d
        .terminate(60)
        .context("the daemon did not exit on SIGTERM")?;
    ensure!(st.success(), "daemon exit {st:?}: {}", log());
    ensure!(
        c_cg.read_limit(LimitKnob::Min)? == Limit::Bytes(0),
        "memory.min not restored"
    );
    ensure!(
        c_cg.read_limit(LimitKnob::SwapMax)? == Limit::Max,
        "memory.swap.max not restored"
    );
    ensure!(
        s_cg.read_limit(LimitKnob::High)? == Limit::Max,
        "memory.high not restored"
    );
    ensure!(
        s_cg.read_limit(LimitKnob::CpuWeight)? == Limit::Bytes(100),
        "cpu.weight not restored"
    );
    std::fs::remove_file("/tmp/memext-crit-cache")?;
    Ok(())
}

/// Writes a file of `mib` MiB to `path` from a shell inside `cg`, so that its
/// pages are charged there.
fn page_cache_in(cg: &ScratchCgroup, path: &str, mib: u32) -> anyhow::Result<()> {
    use std::io::Write;
    let mut sh = Command::new("sh")
        .args([
            "-c",
            &format!("read go && dd if=/dev/urandom of={path} bs=1048576 count={mib} 2>&1"),
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()?;
    cg.attach(sh.id())?;
    sh.stdin.take().context("stdin")?.write_all(b"go\n")?;
    let out = sh.wait_with_output()?;
    ensure!(
        out.status.success(),
        "writing {path} failed: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    Ok(())
}

/// Whether `memext status --json` (from the running daemon) contains `text`.
fn memext_status_has(memext: &Path, cfg: &str, text: &str) -> bool {
    Command::new(memext)
        .args(["--config", cfg, "status", "--json"])
        .output()
        .is_ok_and(|o| {
            String::from_utf8_lossy(&o.stdout)
                .replace(' ', "")
                .contains(text)
        })
}
