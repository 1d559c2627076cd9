//! End-to-end tests on this host's real cgroups (v1 here; v2 hosts work the
//! same) and real swap tiers. They need root. Each makes what it uses under a
//! name of its own and removes it in Drop, also when an assertion fails. Swap
//! and zswap are machine-wide, so the tests run one at a time.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use memext_cgroup::{Limit, LimitKnob, MemoryCgroup, Version};
use memext_e2e::sandbox::{memext, memext_bin, swaps, TierSandbox};
use memext_e2e::scenario::{check_roundtrip, pageout_roundtrip};
use memext_e2e::toucher::Toucher;
use memext_e2e::{host_hierarchy, is_root, status_row, ScratchCgroup};

static MACHINE: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    assert!(
        is_root(),
        "the end-to-end suite needs root (it makes cgroups and swap devices)"
    );
    MACHINE.lock().unwrap_or_else(|p| p.into_inner())
}

fn helper() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_memext-e2e"))
}

#[test]
fn pageout_moves_512mib_to_swap_and_willneed_brings_it_back() {
    let _g = serial();
    let tiers = TierSandbox::new(
        "roundtrip",
        "[[tiers.swapfile]]\npath = \"@DIR@/swap0\"\nsize = \"1GiB\"\npriority = 10\n",
    );
    tiers.up();
    assert!(swaps().contains(&format!("{}/swap0", tiers.dir.display())));
    let h = host_hierarchy().expect("cgroup hierarchy");
    let r = pageout_roundtrip(&h, helper(), 512 << 20).expect("round trip");
    eprintln!("{r:#?}");
    let bad = check_roundtrip(&r);
    assert!(
        bad.is_empty(),
        "round trip on cgroup {}: {bad:#?}",
        h.version
    );
}

#[test]
fn swap_file_tier_up_is_idempotent_and_down_removes_it() {
    let _g = serial();
    let tiers = TierSandbox::new(
        "swapfile",
        "[[tiers.swapfile]]\npath = \"@DIR@/swap0\"\nsize = \"64MiB\"\npriority = 7\n",
    );
    let file = tiers.dir.join("swap0");
    tiers.up();
    tiers.up(); // second time: nothing to do, no error
    let listed = swaps();
    assert_eq!(
        listed.matches(file.to_str().expect("utf-8")).count(),
        1,
        "{listed}"
    );
    let out = tiers.run(&["tiers", "status", "--json"]);
    let status = String::from_utf8_lossy(&out.stdout);
    assert!(status.contains("\"made_by_memext\": true"), "{status}");
    let out = tiers.run(&["tiers", "down"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!swaps().contains(file.to_str().expect("utf-8")));
    assert!(!file.exists());
    assert!(!tiers.dir.join("state/tiers.json").exists());
}

#[test]
fn zram_tier_is_made_and_removed() {
    let _g = serial();
    let before: Vec<String> = std::fs::read_dir("/sys/block")
        .expect("/sys/block")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let tiers = TierSandbox::new(
        "zram",
        "[tiers.zram]\nsize = \"256MiB\"\nalgorithm = \"lz4\"\npriority = 90\n",
    );
    tiers.up();
    let state = std::fs::read_to_string(tiers.dir.join("state/tiers.json")).expect("state");
    let v: serde_json::Value = serde_json::from_str(&state).expect("state is JSON");
    let index = v["zram"]["index"].as_u64().expect("zram recorded");
    let dev = format!("/dev/zram{index}");
    assert!(
        !before.contains(&format!("zram{index}")),
        "memext reused an existing zram device"
    );
    let line = swaps()
        .lines()
        .find(|l| l.starts_with(&dev))
        .map(str::to_owned)
        .expect("zram swap active");
    assert!(line.trim_end().ends_with("90"), "{line}");
    let algo =
        std::fs::read_to_string(format!("/sys/block/zram{index}/comp_algorithm")).expect("algo");
    assert!(algo.contains("[lz4]"), "{algo}");
    let out = tiers.run(&["tiers", "down"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!swaps().contains(&dev));
    assert!(!Path::new(&format!("/sys/block/zram{index}")).exists());
}

#[test]
fn zram_with_an_unknown_algorithm_is_refused_and_leaves_nothing() {
    let _g = serial();
    let tiers = TierSandbox::new(
        "zram-bad",
        "[tiers.zram]\nsize = \"64MiB\"\nalgorithm = \"nosuchzip\"\n",
    );
    let before = std::fs::read_dir("/sys/block").expect("/sys/block").count();
    let out = tiers.run(&["tiers", "up"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nosuchzip") && err.contains("lz4"), "{err}");
    assert_eq!(
        std::fs::read_dir("/sys/block").expect("/sys/block").count(),
        before,
        "a zram device was left behind"
    );
}

#[test]
fn swap_read_ahead_is_set_by_up_and_restored_by_down() {
    let _g = serial();
    let knob = Path::new("/proc/sys/vm/page-cluster");
    let read = || {
        std::fs::read_to_string(knob)
            .expect("page-cluster")
            .trim()
            .to_owned()
    };
    let host = read();
    // Whatever the host has, up must change it: ask for the other of 0 and 1.
    let want = if host == "0" { "1" } else { "0" };
    let tiers = TierSandbox::new(
        "readahead",
        &format!("[tiers]\npage_cluster = {want}\n\n[[tiers.swapfile]]\npath = \"@DIR@/swap0\"\nsize = \"64MiB\"\n"),
    );
    tiers.up();
    assert_eq!(read(), want);
    // A second up keeps the host's value to restore, not its own.
    tiers.up();
    let out = tiers.run(&["tiers", "down"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(read(), host);
}

#[test]
fn large_folios_are_set_by_up_and_restored_by_down() {
    let _g = serial();
    let thp = Path::new("/sys/kernel/mm/transparent_hugepage");
    let read = |kib: u64| {
        std::fs::read_to_string(thp.join(format!("hugepages-{kib}kB/enabled")))
            .ok()
            .and_then(|t| {
                t.split_whitespace()
                    .find_map(|w| Some(w.strip_prefix('[')?.strip_suffix(']')?.to_owned()))
            })
    };
    // A size the host has and does not already allocate always.
    let Some((kib, host)) = [64, 32, 16, 128]
        .into_iter()
        .find_map(|k| read(k).filter(|v| v != "always").map(|v| (k, v)))
    else {
        // No anonymous large folios here: up must say so and change nothing.
        let tiers = TierSandbox::new("folios", "[tiers]\nlarge_folios = \"64KiB\"\n");
        let out = tiers.run(&["tiers", "up"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains("large folios"),
            "{err}"
        );
        return;
    };
    let tiers = TierSandbox::new("folios", &format!("[tiers]\nlarge_folios = \"{kib}KiB\"\n"));
    tiers.up();
    assert_eq!(read(kib).as_deref(), Some("always"));
    let status = tiers.run(&["tiers", "status"]);
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(
        text.contains(&format!("anon {kib} KiB: always (was {host})")),
        "{text}"
    );
    // A second up keeps the host's value to restore, not its own.
    tiers.up();
    let out = tiers.run(&["tiers", "down"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(read(kib), Some(host));
}

#[test]
fn zswap_settings_are_restored_by_down() {
    let _g = serial();
    let p = Path::new("/sys/module/zswap/parameters");
    let read = |f: &str| {
        std::fs::read_to_string(p.join(f))
            .expect("zswap param")
            .trim()
            .to_owned()
    };
    let (enabled, compressor, pool) = (
        read("enabled"),
        read("compressor"),
        read("max_pool_percent"),
    );
    let tiers = TierSandbox::new(
        "zswap",
        "[tiers.zswap]\ncompressor = \"lzo-rle\"\nmax_pool_percent = 13\n\n[[tiers.swapfile]]\npath = \"@DIR@/swap0\"\nsize = \"64MiB\"\n",
    );
    tiers.up();
    assert_eq!(
        (
            read("enabled").as_str(),
            read("compressor").as_str(),
            read("max_pool_percent").as_str()
        ),
        ("Y", "lzo-rle", "13")
    );
    let out = tiers.run(&["tiers", "down"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        (
            read("enabled"),
            read("compressor"),
            read("max_pool_percent")
        ),
        (enabled, compressor, pool)
    );
}

#[test]
fn a_failing_tier_undoes_the_tiers_made_before_it() {
    let _g = serial();
    let tiers = TierSandbox::new(
        "undo",
        "[[tiers.swapfile]]\npath = \"@DIR@/good\"\nsize = \"32MiB\"\n\n[[tiers.swapfile]]\npath = \"/dev/shm/memext-e2e-never/bad\"\nsize = \"32MiB\"\n",
    );
    let good = tiers.dir.join("good");
    let out = tiers.run(&["tiers", "up"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !swaps().contains(good.to_str().expect("utf-8")),
        "the first swap file was left on"
    );
    assert!(!good.exists(), "the first swap file was left on disk");
    let state = std::fs::read_to_string(tiers.dir.join("state/tiers.json")).unwrap_or_default();
    assert!(!state.contains("good"), "state still lists it: {state}");
}

#[test]
fn commands_that_need_root_refuse_with_one_line() {
    let _g = serial();
    let tiers = TierSandbox::new(
        "nonroot",
        "[[tiers.swapfile]]\npath = \"@DIR@/swap0\"\nsize = \"32MiB\"\n",
    );
    for action in ["up", "down"] {
        let out = Command::new("runuser")
            .args(["-u", "nobody", "--"])
            .arg(memext_bin())
            .args([
                "--config",
                tiers.config.to_str().expect("utf-8"),
                "tiers",
                action,
            ])
            .output()
            .expect("runuser");
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("needs root"), "{err}");
    }
    assert!(!tiers.dir.join("swap0").exists());
}

#[test]
fn status_of_a_cgroup_that_does_not_exist_is_one_line() {
    let out = memext(&[
        "status",
        "--cgroup",
        "/memext-e2e-no-such-cgroup",
        "--interval",
        "1ms",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("/memext-e2e-no-such-cgroup") && err.contains("does not exist"),
        "{err}"
    );
    let out = memext(&["status", "--cgroup", "relative/path"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("must be absolute"));
}

#[test]
fn swap_file_on_tmpfs_is_refused_with_one_line() {
    let _g = serial();
    let tiers = TierSandbox::new(
        "tmpfs",
        "[[tiers.swapfile]]\npath = \"/dev/shm/memext-e2e-never/swap\"\nsize = \"16MiB\"\n",
    );
    let out = tiers.run(&["tiers", "up"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("memext: error"))
        .collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains("tmpfs"), "{err}");
    assert!(!Path::new("/dev/shm/memext-e2e-never").exists());
}

#[test]
fn real_cgroup_knobs_and_counters() {
    let _g = serial();
    let h = host_hierarchy().expect("hierarchy");
    let cg = ScratchCgroup::new(&h, "knobs").expect("cgroup");
    let c = cg.open().expect("open");
    let mut t = Toucher::spawn(helper(), 64 << 20).expect("toucher");
    cg.attach(t.pid()).expect("attach");
    t.alloc().expect("alloc");
    assert_eq!(c.procs().expect("procs"), vec![t.pid()]);
    let m = c.memory().expect("memory");
    assert!(m.anon_bytes >= 60 << 20, "{m:?}");
    assert!(m.pgfault >= (60 << 20) / 4096, "{m:?}");
    match h.version {
        Version::V1 => {
            assert_eq!(c.read_limit(LimitKnob::V1Limit).expect("limit"), Limit::Max);
            c.write_limit(LimitKnob::V1Limit, Limit::Bytes(1 << 30))
                .expect("write limit");
            assert_eq!(
                c.read_limit(LimitKnob::V1Limit).expect("limit"),
                Limit::Bytes(1 << 30)
            );
            c.write_limit(LimitKnob::V1MemswLimit, Limit::Bytes(2 << 30))
                .expect("write memsw");
            assert_eq!(
                c.read_limit(LimitKnob::V1MemswLimit).expect("memsw"),
                Limit::Bytes(2 << 30)
            );
            c.write_limit(LimitKnob::V1MemswLimit, Limit::Max)
                .expect("memsw max");
            c.write_limit(LimitKnob::V1Limit, Limit::Max)
                .expect("limit max");
            assert_eq!(c.read_limit(LimitKnob::V1Limit).expect("limit"), Limit::Max);
            c.set_swappiness(100).expect("swappiness");
            assert_eq!(c.swappiness().expect("swappiness"), Some(100));
            // A limit below what is in use and cannot be reclaimed (no swap) is
            // refused by the kernel, and the error says which file of which cgroup.
            if swaps().lines().count() <= 1 {
                c.set_swappiness(0).expect("swappiness 0");
                let e = c
                    .write_limit(LimitKnob::V1Limit, Limit::Bytes(4 << 20))
                    .expect_err("below usage");
                assert!(e.to_string().contains("memory.limit_in_bytes"), "{e}");
                c.write_limit(LimitKnob::V1Limit, Limit::Max)
                    .expect("limit max");
            }
        }
        Version::V2 => unreachable!("this host's memory controller is v1; v2 runs in the VM suite"),
    }
    let cpu0 = c.cpu_usage().expect("cpu").expect("cpuacct present");
    for _ in 0..5 {
        t.touch().expect("touch");
    }
    let cpu1 = c.cpu_usage().expect("cpu").expect("cpuacct present");
    assert!(cpu1 > cpu0, "cpu time did not grow: {cpu0:?} -> {cpu1:?}");
    let psi = c.memory_pressure().expect("psi");
    assert!(
        psi.is_some(),
        "the hybrid host has PSI under /sys/fs/cgroup/unified"
    );
    drop(t);
}

#[test]
fn status_shows_a_selected_context_with_its_memory() {
    let _g = serial();
    let h = host_hierarchy().expect("hierarchy");
    let cg = ScratchCgroup::new(&h, "busy").expect("cgroup");
    let mut t = Toucher::spawn(helper(), 96 << 20).expect("toucher");
    cg.attach(t.pid()).expect("attach");
    t.alloc().expect("alloc");
    let dir = tempfile_dir("status");
    let cfg = dir.join("memext.toml");
    std::fs::write(
        &cfg,
        format!(
            "[[select]]\ncgroup = \"{}/*\"\nclass = \"extend\"\n",
            cg.parent
        ),
    )
    .expect("config");
    let out = memext(&[
        "--config",
        cfg.to_str().expect("utf-8"),
        "status",
        "--json",
        "--interval",
        "200ms",
    ]);
    std::fs::remove_dir_all(&dir).ok();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let row = status_row(&String::from_utf8_lossy(&out.stdout), cg.path.as_str())
        .expect("context listed");
    assert_eq!(row["class"], "extend", "{row}");
    assert_eq!(row["runtime"], "plain", "{row}");
    assert_eq!(row["pids"], 1, "{row}");
    assert!(
        row["resident_bytes"].as_u64().expect("resident") >= 90 << 20,
        "{row}"
    );
    assert!(
        row["memory_pressure_some_avg10"].is_number(),
        "the hybrid host has PSI: {row}"
    );
    drop(t);
}

fn tempfile_dir(label: &str) -> PathBuf {
    let d = PathBuf::from(format!(
        "/var/tmp/memext-e2e-{}-{label}",
        std::process::id()
    ));
    std::fs::create_dir_all(&d).expect("dir");
    d
}
