//! The observer on checked-in fake trees (memext-cgroup/fixtures: v1 with
//! Docker, Podman and the kubelet's cgroupfs layout; v2 with Docker, Podman
//! and the kubelet's systemd layout with containerd and CRI-O) and a fake proc
//! directory, with a clock the test moves.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::*;
use crate::identity::Runtime;

const MIB: u64 = 1 << 20;
const A1: &str = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1";
const F6: &str = "f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6";
const C3: &str = "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3";
/// The second pod (fixtures/make_fixtures.py: POD2).
const POD2: &str = "9a8b7c6d-1e2f-4a5b-8c7d-abcdefabcdef";

/// A clock that only moves when slept on.
struct FakeClock(Mutex<Duration>);

impl Clock for FakeClock {
    fn now(&self) -> Instant {
        *self.0.lock().expect("clock")
    }
    fn sleep(&self, d: Duration) {
        *self.0.lock().expect("clock") += d;
    }
}

fn fixture(v: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../memext-cgroup/fixtures")
        .join(v)
}

fn fake_proc(swaps: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        d.path().join("meminfo"),
        "MemTotal:        8388608 kB\nMemFree: 1 kB\n",
    )
    .expect("meminfo");
    std::fs::write(d.path().join("swaps"), swaps).expect("swaps");
    d
}

fn observer(tree: &str, proc_root: &Path) -> PollingObserver {
    let host = Host {
        proc_root: proc_root.into(),
        hierarchy: Hierarchy::probe(&fixture(tree)).expect("fixture"),
        clock: Arc::new(FakeClock(Mutex::new(Duration::from_secs(100)))),
    };
    PollingObserver::new(host, Duration::from_millis(20))
}

fn config(text: &str) -> Config {
    Config::parse(text, Path::new("test.toml")).expect("config")
}

const SELECT_ALL: &str = "[[select]]\nruntime = \"docker\"\nclass = \"extend\"\n\n[[select]]\nruntime = \"kubernetes\"\nclass = \"critical\"\n\n[[select]]\nruntime = \"containerd\"\nclass = \"critical\"\n";

fn find<'a>(ctxs: &'a [MemoryContext], path: &str) -> &'a MemoryContext {
    ctxs.iter()
        .find(|c| c.path.as_str() == path)
        .unwrap_or_else(|| panic!("{path} not found in {ctxs:?}"))
}

#[test]
fn v1_docker_and_kubelet_cgroupfs_contexts_are_found_and_sampled() {
    let proc = fake_proc("Filename Type Size Used Priority\n");
    let mut o = observer("v1", proc.path());
    let ctxs = o.discover(&config(SELECT_ALL)).expect("discover");
    let docker = find(&ctxs, &format!("/docker/{A1}"));
    assert_eq!(docker.identity.runtime, Runtime::Docker);
    let pod = ctxs
        .iter()
        .find(|c| c.identity.runtime == Runtime::Kubernetes)
        .expect("the kubelet's cgroupfs pod container");
    assert!(
        pod.path.as_str().starts_with("/kubepods/burstable/pod"),
        "{}",
        pod.path
    );
    assert!(!ctxs
        .iter()
        .any(|c| c.path.as_str().starts_with("/process_api")));

    let cg = o.host().hierarchy.open(&docker.path).expect("open");
    let s = o.sample(&cg).expect("sample");
    assert_eq!(
        s.at,
        Duration::from_secs(100),
        "the host's clock, not the wall"
    );
    assert_eq!(s.pids, vec![4101, 4102]);
    assert_eq!(s.memory.usage, 320 * MIB);
    assert_eq!(s.memory.resident, 320 * MIB);
    assert_eq!(s.memory.swapped, 64 * MIB);
    assert_eq!((s.memory.pgfault, s.memory.pgmajfault), (4800, 120));
    assert_eq!(s.cpu, Some(Duration::from_secs(5)));
    assert_eq!(s.psi_some_avg10, Some(1.25));
}

#[test]
fn v2_kubelet_systemd_layout_and_docker_scope_are_found_and_sampled() {
    let proc = fake_proc("Filename Type Size Used Priority\n");
    let mut o = observer("v2", proc.path());
    let ctxs = o.discover(&config(SELECT_ALL)).expect("discover");
    let pod = find(
        &ctxs,
        &format!("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod5f0c9f7e_3b1d_4c55_9d5e_0123456789ab.slice/cri-containerd-{F6}.scope"),
    );
    assert_eq!(pod.class, crate::config::Class::Critical);
    let cg = o.host().hierarchy.open(&pod.path).expect("open");
    let s = o.sample(&cg).expect("sample");
    assert_eq!((s.pids.as_slice(), s.memory.usage), (&[5401][..], 65 * MIB));

    let docker = find(&ctxs, &format!("/system.slice/docker-{C3}.scope"));
    let s = o
        .sample(&o.host().hierarchy.open(&docker.path).expect("open"))
        .expect("sample");
    assert_eq!(s.memory.swapped, 32 * MIB);
    assert_eq!(s.memory.pgmajfault, 77);
    assert_eq!(s.cpu, Some(Duration::from_secs(3)));
    assert_eq!(s.psi_some_avg10, Some(1.0));
}

/// The kubelet's two cgroup drivers on both versions: systemd-driver pods on
/// v1, cgroupfs-driver pods on v2 (the tests above cover the other two).
#[test]
fn kubelet_pods_in_the_other_driver_of_each_version_are_found_and_sampled() {
    let proc = fake_proc("");
    let mut o = observer("v1", proc.path());
    let ctxs = o.discover(&config(SELECT_ALL)).expect("discover");
    let slice = format!(
        "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod{}.slice",
        POD2.replace('-', "_")
    );
    let pod = find(
        &ctxs,
        &format!("{slice}/cri-containerd-{}.scope", "18".repeat(32)),
    );
    assert_eq!(pod.identity.runtime, Runtime::Containerd);
    let s = o
        .sample(&o.host().hierarchy.open(&pod.path).expect("open"))
        .expect("sample");
    assert_eq!((s.pids.as_slice(), s.memory.usage), (&[4651][..], 48 * MIB));

    let mut o = observer("v2", proc.path());
    let ctxs = o.discover(&config(SELECT_ALL)).expect("discover");
    let pod = find(
        &ctxs,
        &format!("/kubepods/besteffort/pod{POD2}/{}", "29".repeat(32)),
    );
    assert_eq!(pod.identity.runtime, Runtime::Kubernetes);
    assert_eq!(pod.identity.pod.as_deref(), Some(POD2));
    assert_eq!(pod.class, crate::config::Class::Critical);
    let s = o
        .sample(&o.host().hierarchy.open(&pod.path).expect("open"))
        .expect("sample");
    assert_eq!((s.pids.as_slice(), s.memory.usage), (&[5601][..], 41 * MIB));
}

#[test]
fn cgroups_left_alone_come_from_the_config() {
    let proc = fake_proc("");
    let mut o = observer("v1", proc.path());
    let select = "[[select]]\ncgroup = \"/process_api/*\"\nclass = \"extend\"\n";
    let selected = |o: &mut PollingObserver, text: &str| -> Vec<String> {
        let ctxs = o.discover(&config(text)).expect("discover");
        ctxs.into_iter()
            .filter(|c| c.class != crate::config::Class::Ignore)
            .map(|c| c.path.to_string())
            .collect()
    };
    assert!(selected(&mut o, select).is_empty(), "left alone by default");
    let other = format!("[host]\nleave_alone = [\"batch\"]\n\n{select}");
    assert_eq!(selected(&mut o, &other), vec!["/process_api/xyz"]);
}

#[test]
fn host_facts_come_from_the_proc_root_and_the_capacity_cgroup() {
    let zram_first = "Filename\tType\tSize\tUsed\tPriority\n/var/lib/memext/swap0 file 1048576 0 50\n/dev/zram0 partition 524288 100 100\n";
    let proc = fake_proc(zram_first);
    let mut o = observer("v1", proc.path());
    let f = o
        .host_facts(&config("[daemon]\nreserve = \"2GiB\"\n"))
        .expect("facts");
    assert_eq!(f.capacity, 6 << 30, "8 GiB of MemTotal less the reserve");
    assert!(f.next_swap_is_zram);
    let f = o
        .host_facts(&config(&format!(
            "[daemon]\ncapacity_cgroup = \"/docker/{A1}\"\n"
        )))
        .expect("facts");
    assert_eq!(f.capacity, 1 << 30, "the cgroup's limit");

    let file_only = fake_proc("Filename Type Size Used Priority\n/swap0 file 1048576 0 50\n");
    let mut o = observer("v1", file_only.path());
    assert!(!o.host_facts(&config("")).expect("facts").next_swap_is_zram);
    // v1: the extend limits keep the critical contexts' room unless told not to.
    assert!(o.host_facts(&config("")).expect("facts").limits_protect);
    let lent = config("[daemon]\nlimit_room = false\n");
    assert!(!o.host_facts(&lent).expect("facts").limits_protect);
    let mut o = observer("v2", file_only.path());
    assert!(
        !o.host_facts(&config("")).expect("facts").limits_protect,
        "v2 has memory.min"
    );
}

#[test]
fn watch_waits_one_poll_at_most_and_reads_the_watched_cpu() {
    let proc = fake_proc("");
    let mut o = observer("v2", proc.path());
    let path = memext_cgroup::CgroupPath::parse(&format!("/system.slice/docker-{C3}.scope"))
        .expect("path");
    let cg = o.host().hierarchy.open(&path).expect("open");
    let id = ContextId::new(path.as_str());
    let start = o.host().clock.now();
    let r = o.watch(
        &[Watched {
            id: &id,
            cg: &cg,
            poll: false,
            usage: 0,
        }],
        start + Duration::from_secs(1),
    );
    assert_eq!(
        r,
        vec![Seen::Cpu(CpuReading {
            id: id.clone(),
            at: start + Duration::from_millis(20),
            cpu: Duration::from_secs(3)
        })]
    );
    // Never past the tick's deadline.
    let deadline = o.host().clock.now() + Duration::from_millis(5);
    let r = o.watch(
        &[Watched {
            id: &id,
            cg: &cg,
            poll: false,
            usage: 0,
        }],
        deadline,
    );
    assert!(matches!(&r[0], Seen::Cpu(c) if c.at == deadline), "{r:?}");
}
