//! The cgroup layer on checked-in fake trees (fixtures/make_fixtures.py), v1 and v2.

use std::path::{Path, PathBuf};
use std::time::Duration;

use memext_cgroup::{
    CgroupError, CgroupPath, Hierarchy, Limit, LimitKnob, MemoryCgroup, Reclaimed, Version,
};

fn fixture(v: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(v)
}

/// A writable copy of a fixture tree.
fn copy_fixture(v: &str) -> tempfile::TempDir {
    let dst = tempfile::tempdir().expect("tempdir");
    copy_dir(&fixture(v), dst.path());
    dst
}

fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).expect("mkdir");
    for e in std::fs::read_dir(src).expect("read fixture") {
        let e = e.expect("entry");
        let to = dst.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_dir(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), to).expect("copy");
        }
    }
}

fn p(s: &str) -> CgroupPath {
    CgroupPath::parse(s).expect("valid path")
}

const DOCKER: &str = "/docker/a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1";
const V2_DOCKER: &str =
    "/system.slice/docker-c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3.scope";

#[test]
fn probes_v1_with_cpuacct_and_psi() {
    let h = Hierarchy::probe(&fixture("v1")).expect("v1 tree");
    assert_eq!(h.version, Version::V1);
    assert_eq!(h.memory_root, fixture("v1").join("memory"));
    assert_eq!(h.cpuacct_root, Some(fixture("v1").join("cpuacct")));
    assert_eq!(h.psi_root, Some(fixture("v1").join("unified")));
}

#[test]
fn probes_v2() {
    let h = Hierarchy::probe(&fixture("v2")).expect("v2 tree");
    assert_eq!(h.version, Version::V2);
    assert!(h.cpuacct_root.is_none());
}

#[test]
fn probe_refuses_a_tree_without_memory() {
    let d = tempfile::tempdir().expect("tempdir");
    std::fs::write(d.path().join("cgroup.controllers"), "cpu io pids\n").expect("write");
    assert!(Hierarchy::probe(d.path()).is_err());
}

#[test]
fn v1_reads() {
    let h = Hierarchy::probe(&fixture("v1")).expect("v1 tree");
    let cg = h.open(&p(DOCKER)).expect("open");
    assert_eq!(cg.version(), Version::V1);
    assert_eq!(cg.procs().expect("procs"), vec![4101, 4102]);
    let m = cg.memory().expect("memory");
    assert_eq!(m.anon_bytes, 300 << 20);
    assert_eq!(m.file_bytes, 20 << 20);
    assert_eq!(m.resident_bytes(), 320 << 20);
    assert_eq!(m.swap_bytes, 64 << 20);
    assert_eq!(m.pgmajfault, 120);
    assert_eq!(m.pgfault, 4800);
    assert_eq!(m.workingset_refault_anon, 7);
    assert_eq!(m.workingset_refault_file, 11);
    assert_eq!(cg.cpu_usage().expect("cpu"), Some(Duration::from_secs(5)));
    assert_eq!(
        cg.memory_pressure()
            .expect("psi")
            .expect("has psi")
            .some
            .avg10,
        1.25
    );
    assert_eq!(
        cg.read_limit(LimitKnob::V1Limit).expect("limit"),
        Limit::Bytes(1 << 30)
    );
    assert_eq!(
        cg.read_limit(LimitKnob::V1MemswLimit).expect("memsw"),
        Limit::Max
    );
    assert_eq!(cg.swappiness().expect("swappiness"), Some(60));
}

#[test]
fn v1_parent_without_psi_has_none() {
    let h = Hierarchy::probe(&fixture("v1")).expect("v1 tree");
    assert!(h
        .open(&p("/docker"))
        .expect("open")
        .memory_pressure()
        .expect("psi")
        .is_none());
}

#[test]
fn v1_procs_recursive_includes_children() {
    let h = Hierarchy::probe(&fixture("v1")).expect("v1 tree");
    let podman = "/machine.slice/libpod-d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4.scope";
    assert_eq!(
        h.open(&p(podman))
            .expect("open")
            .procs_recursive()
            .expect("procs"),
        vec![4501, 4502]
    );
}

#[test]
fn v1_malformed_stat_names_the_file_and_field() {
    let h = Hierarchy::probe(&fixture("v1")).expect("v1 tree");
    match h.open(&p("/broken")).expect("open").memory() {
        Err(e @ CgroupError::MissingField { .. }) => {
            let msg = e.to_string();
            assert!(
                msg.contains("memory.stat") && msg.contains("/broken") && msg.contains("total_rss"),
                "{msg}"
            );
        }
        other => panic!("expected MissingField, got {other:?}"),
    }
}

#[test]
fn v1_writes_use_the_kernel_format() {
    let t = copy_fixture("v1");
    let h = Hierarchy::probe(t.path()).expect("v1 tree");
    let cg = h.open(&p(DOCKER)).expect("open");
    let file = |name: &str| {
        std::fs::read_to_string(p(DOCKER).under(&t.path().join("memory")).join(name)).expect("read")
    };
    cg.write_limit(LimitKnob::V1Limit, Limit::Bytes(256 << 20))
        .expect("write");
    assert_eq!(file("memory.limit_in_bytes"), "268435456");
    cg.write_limit(LimitKnob::V1Limit, Limit::Max)
        .expect("write max");
    assert_eq!(file("memory.limit_in_bytes"), "-1");
    cg.write_limit(LimitKnob::V1MemswLimit, Limit::Bytes(1 << 30))
        .expect("write memsw");
    assert_eq!(file("memory.memsw.limit_in_bytes"), "1073741824");
    cg.set_swappiness(100).expect("swappiness");
    assert_eq!(file("memory.swappiness"), "100");
    assert_eq!(
        cg.read_limit(LimitKnob::V1OomKillDisable)
            .expect("oom_control"),
        Limit::Bytes(0)
    );
    cg.write_limit(LimitKnob::V1OomKillDisable, Limit::Bytes(1))
        .expect("disable OOM kill");
    assert_eq!(file("memory.oom_control"), "1");
    assert!(matches!(
        cg.set_swappiness(201),
        Err(CgroupError::BadSwappiness { .. })
    ));
}

#[test]
fn v1_freezer_is_written_as_the_kernel_spells_it_in_its_own_hierarchy() {
    let t = copy_fixture("v1");
    let h = Hierarchy::probe(t.path()).expect("v1 tree");
    assert_eq!(h.freezer_root, Some(t.path().join("freezer")));
    let cg = h.open(&p(DOCKER)).expect("open");
    let state = p(DOCKER)
        .under(&t.path().join("freezer"))
        .join("freezer.state");
    assert_eq!(
        cg.read_limit(LimitKnob::V1Freezer).expect("read"),
        Limit::Bytes(0)
    );
    cg.write_limit(LimitKnob::V1Freezer, Limit::Bytes(1))
        .expect("freeze");
    assert_eq!(std::fs::read_to_string(&state).expect("read"), "FROZEN");
    assert_eq!(
        cg.read_limit(LimitKnob::V1Freezer).expect("read"),
        Limit::Bytes(1)
    );
    cg.write_limit(LimitKnob::V1Freezer, Limit::Bytes(0))
        .expect("thaw");
    assert_eq!(std::fs::read_to_string(&state).expect("read"), "THAWED");
    // A cgroup the freezer hierarchy does not hold cannot be frozen.
    let other = h.open(&p("/batch/job1")).expect("open");
    assert!(matches!(
        other.write_limit(LimitKnob::V1Freezer, Limit::Bytes(1)),
        Err(CgroupError::Unsupported { .. })
    ));
}

#[test]
fn v1_refuses_v2_knobs() {
    let h = Hierarchy::probe(&fixture("v1")).expect("v1 tree");
    let cg = h.open(&p(DOCKER)).expect("open");
    for knob in [
        LimitKnob::High,
        LimitKnob::Max,
        LimitKnob::Low,
        LimitKnob::Min,
        LimitKnob::SwapMax,
        LimitKnob::ZswapMax,
    ] {
        assert!(
            matches!(
                cg.write_limit(knob, Limit::Max),
                Err(CgroupError::Unsupported {
                    needs: Version::V2,
                    ..
                })
            ),
            "{knob}"
        );
    }
    assert!(matches!(
        cg.reclaim(4096),
        Err(CgroupError::Unsupported { .. })
    ));
}

#[test]
fn v2_reads() {
    let h = Hierarchy::probe(&fixture("v2")).expect("v2 tree");
    let cg = h.open(&p(V2_DOCKER)).expect("open");
    assert_eq!(cg.version(), Version::V2);
    assert_eq!(cg.procs().expect("procs"), vec![5101, 5102]);
    let m = cg.memory().expect("memory");
    assert_eq!(m.anon_bytes, 200 << 20);
    assert_eq!(m.file_bytes, 8 << 20);
    assert_eq!(m.swap_bytes, 32 << 20);
    assert_eq!(m.usage_bytes, (208 << 20) + (1 << 20));
    assert_eq!(m.pgmajfault, 77);
    assert_eq!(m.workingset_refault_anon, 5);
    assert_eq!(m.swap_max, None, "memory.swap.max is max");
    assert_eq!(m.anon_beyond_swap_limit(), 0);
    assert_eq!(cg.cpu_usage().expect("cpu"), Some(Duration::from_secs(3)));
    let psi = cg.memory_pressure().expect("psi").expect("has psi");
    assert_eq!(psi.some.total_us, 4242);
    assert!(psi.full.is_some());
    assert_eq!(cg.read_limit(LimitKnob::High).expect("high"), Limit::Max);
    assert_eq!(cg.read_limit(LimitKnob::Low).expect("low"), Limit::Bytes(0));
    assert_eq!(cg.swappiness().expect("swappiness"), None);
}

#[test]
fn v2_writes_use_the_kernel_format() {
    let t = copy_fixture("v2");
    let h = Hierarchy::probe(t.path()).expect("v2 tree");
    let cg = h.open(&p(V2_DOCKER)).expect("open");
    let file = |name: &str| {
        std::fs::read_to_string(p(V2_DOCKER).under(t.path()).join(name)).expect("read")
    };
    for (knob, name) in [
        (LimitKnob::High, "memory.high"),
        (LimitKnob::Max, "memory.max"),
        (LimitKnob::Low, "memory.low"),
        (LimitKnob::Min, "memory.min"),
        (LimitKnob::SwapMax, "memory.swap.max"),
        (LimitKnob::ZswapMax, "memory.zswap.max"),
    ] {
        cg.write_limit(knob, Limit::Bytes(123 << 20))
            .expect("write");
        assert_eq!(file(name), (123u64 << 20).to_string());
        assert_eq!(
            cg.read_limit(knob).expect("read back"),
            Limit::Bytes(123 << 20)
        );
        cg.write_limit(knob, Limit::Max).expect("write max");
        assert_eq!(file(name), "max");
    }
    assert_eq!(cg.reclaim(64 << 20).expect("reclaim"), Reclaimed::All);
    assert_eq!(file("memory.reclaim"), "67108864");
    assert!(matches!(
        cg.write_limit(LimitKnob::V1Limit, Limit::Max),
        Err(CgroupError::Unsupported {
            needs: Version::V1,
            ..
        })
    ));
    assert!(cg.set_swappiness(10).is_err());
    assert_eq!(
        cg.read_limit(LimitKnob::Freeze).expect("read"),
        Limit::Bytes(0)
    );
    cg.write_limit(LimitKnob::Freeze, Limit::Bytes(1))
        .expect("freeze");
    assert_eq!(file("cgroup.freeze"), "1");
}

/// The charges that met a limit, as each version counts them: v1
/// `memory.failcnt`, v2 `memory.events`' `max` (its other counts are not it).
#[test]
fn limit_hits_are_read_from_each_versions_own_counter() {
    let t = copy_fixture("v1");
    let dir = t.path().join("memory/docker");
    std::fs::write(dir.join("memory.failcnt"), "4711\n").expect("failcnt");
    let h = Hierarchy::probe(t.path()).expect("v1 tree");
    let cg = h.open(&p("/docker")).expect("open");
    assert_eq!(cg.limit_hits().expect("failcnt"), 4711);
    std::fs::remove_file(dir.join("memory.failcnt")).expect("rm");
    assert!(cg.limit_hits().is_err(), "no counter, no count");

    let t = copy_fixture("v2");
    let dir = t.path().join("system.slice/nginx.service");
    let events = "low 0\nhigh 9\nmax 23\noom 1\noom_kill 0\noom_group_kill 0\n";
    std::fs::write(dir.join("memory.events"), events).expect("events");
    let h = Hierarchy::probe(t.path()).expect("v2 tree");
    let cg = h.open(&p("/system.slice/nginx.service")).expect("open");
    assert_eq!(cg.limit_hits().expect("events"), 23);
    std::fs::write(dir.join("memory.events"), "low 0\nhigh 9\n").expect("events");
    assert!(matches!(
        cg.limit_hits(),
        Err(CgroupError::MissingField { field: "max", .. })
    ));
}

#[test]
fn vanished_cgroup_is_reported_as_such() {
    let t = copy_fixture("v2");
    let h = Hierarchy::probe(t.path()).expect("v2 tree");
    let cg = h.open(&p("/system.slice/nginx.service")).expect("open");
    std::fs::remove_dir_all(t.path().join("system.slice/nginx.service")).expect("rm");
    assert!(matches!(cg.memory(), Err(CgroupError::Vanished { .. })));
    assert!(matches!(
        h.open(&p("/system.slice/nginx.service")),
        Err(CgroupError::Vanished { .. })
    ));
}

#[test]
fn symlinked_control_file_is_not_followed() {
    let t = copy_fixture("v2");
    let dir = t.path().join("system.slice/nginx.service");
    std::fs::remove_file(dir.join("memory.max")).expect("rm");
    std::os::unix::fs::symlink("/etc/passwd", dir.join("memory.max")).expect("symlink");
    let h = Hierarchy::probe(t.path()).expect("v2 tree");
    let cg = h.open(&p("/system.slice/nginx.service")).expect("open");
    assert!(cg.read_limit(LimitKnob::Max).is_err());
    assert!(cg.write_limit(LimitKnob::Max, Limit::Max).is_err());
    assert!(std::fs::read_to_string("/etc/passwd")
        .expect("passwd")
        .contains("root"));
}

#[test]
fn walk_lists_parents_before_children_and_skips_symlinks() {
    let t = copy_fixture("v2");
    std::os::unix::fs::symlink("/", t.path().join("system.slice/evil")).expect("symlink");
    let h = Hierarchy::probe(t.path()).expect("v2 tree");
    let all = h.walk().expect("walk");
    let pos = |s: &str| {
        all.iter()
            .position(|c| c.as_str() == s)
            .unwrap_or_else(|| panic!("{s} missing"))
    };
    assert!(pos("/system.slice") < pos(V2_DOCKER));
    assert!(pos("/kubepods.slice") < pos("/kubepods.slice/kubepods-burstable.slice"));
    assert!(!all.iter().any(|c| c.as_str().contains("evil")));
}

#[test]
fn create_and_remove_on_a_fake_v2_tree_enable_controllers() {
    let t = copy_fixture("v2");
    let h = Hierarchy::probe(t.path()).expect("v2 tree");
    let path = p("/memext-test/ctx");
    h.create(&path).err(); // the fake kernel creates no control files, so open may fail
    assert!(t.path().join("memext-test/ctx").is_dir());
    let sub = std::fs::read_to_string(t.path().join("memext-test/cgroup.subtree_control"))
        .unwrap_or_default();
    // The fake has no cgroup.controllers in new dirs, so nothing is enabled there;
    // the root already had memory enabled and must not have been rewritten.
    assert!(sub.is_empty());
    assert_eq!(
        std::fs::read_to_string(t.path().join("cgroup.subtree_control")).expect("root"),
        "cpu memory pids\n"
    );
    h.remove(&path).expect("remove");
    assert!(!t.path().join("memext-test/ctx").exists());
    h.remove(&path).expect("removing twice is fine");
}

/// A runtime makes a cgroup in one hierarchy after another: memext may open
/// it when only its memory directory exists. Its CPU time is read once the
/// cpuacct directory appears, not missed for as long as memext tracks it.
#[test]
fn v1_directories_made_after_the_open_are_found() {
    let t = copy_fixture("v1");
    let h = Hierarchy::probe(t.path()).expect("v1 tree");
    let acct = t.path().join("cpuacct").join(&DOCKER[1..]);
    let saved = t.path().join("cpuacct-saved");
    std::fs::rename(&acct, &saved).expect("hide the cpuacct directory");
    let cg = h.open(&p(DOCKER)).expect("open with memory only");
    assert_eq!(cg.cpu_usage().expect("no cpuacct yet"), None);
    std::fs::rename(&saved, &acct).expect("the runtime makes it");
    assert!(cg.cpu_usage().expect("cpuacct").is_some());
}

/// Kubernetes' LimitedSwap writes a container's `memory.swap.max`: what of
/// its anonymous memory cannot go to swap is read from it.
#[test]
fn v2_swap_limit_keeps_anon_in_dram() {
    let dir = tempfile::tempdir().expect("tmp");
    let copy = std::process::Command::new("cp")
        .arg("-r")
        .arg(fixture("v2"))
        .arg(dir.path())
        .status()
        .expect("cp");
    assert!(copy.success());
    let root = dir.path().join("v2");
    let knob = root
        .join(V2_DOCKER.trim_start_matches('/'))
        .join("memory.swap.max");
    std::fs::write(&knob, format!("{}\n", 100u64 << 20)).expect("swap.max");
    let h = Hierarchy::probe(&root).expect("v2 tree");
    let m = h
        .open(&p(V2_DOCKER))
        .expect("open")
        .memory()
        .expect("memory");
    assert_eq!(m.swap_max, Some(100 << 20));
    // 200 MiB of anon, 32 MiB of it in swap already: room for 68 MiB more.
    assert_eq!(m.anon_beyond_swap_limit(), 132 << 20);
    std::fs::write(&knob, "0\n").expect("swap.max");
    let m = h
        .open(&p(V2_DOCKER))
        .expect("open")
        .memory()
        .expect("memory");
    assert_eq!(m.anon_beyond_swap_limit(), 200 << 20, "no swap: all of it");
}
